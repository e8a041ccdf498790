package acp

import (
	"encoding/json"
	"fmt"
	"github.com/acpclient/acp/schema"
)

// Version negotiation: the client offers the highest version it was asked
// to speak (ClientOptions.ProtocolVersion) and takes what the agent picks,
// at most the offered one (schema v2 InitializeResponse.protocolVersion).
// A v2 offer carries both shapes of initialize: the v2 keys (info,
// capabilities) for an agent that answers 2, and the v1 keys (clientInfo,
// clientCapabilities) for one that answers 1, so a v1 agent still learns
// the client's fs and terminal handlers. Each version ignores the other's
// keys.

// offeredVersion is the version the client offers: ClientOptions'
// ProtocolVersion, 1 when zero.
func (o *ClientOptions) offeredVersion() (int, error) {
	switch o.ProtocolVersion {
	case 0, 1:
		return 1, nil
	case 2:
		return 2, nil
	}
	return 0, fmt.Errorf("%w: ClientOptions.ProtocolVersion is %d; this client speaks 1 and 2", schema.ErrUnsupportedVersion, o.ProtocolVersion)
}

// initParams returns the initialize params offering version v.
func (c *Client) initParams(v int) any {
	info := c.opts.ClientInfo
	if info == nil {
		info = &schema.Implementation{Name: "acp-go", Version: Version}
	}
	return schema.InitializeParams(v, info, c.capabilities())
}

// checkSessionBaseline fails a session method of a v2 agent that
// advertised no session capability: in v2, omitting capabilities.session
// means the agent supports no session/* method. (v1 has no such marker.)
func (c *Client) checkSessionBaseline(method string) error {
	if c.version == 2 && c.agent().AgentCapabilities.SessionCapabilities.Resume == nil {
		return notSupported(method, "capabilities.session")
	}
	return nil
}

// onInitAnswered is the reader's hook for the answer to initialize: a
// version-2 answer to a v2 offer switches the connection to v2 here, on
// the reader, before the next line (an agent may write an update right
// after answering). Connect validates the rest of the answer; a version it
// refuses closes the connection anyway.
//
// On a restarted connection (g.n > 1) the version the client speaks is
// already fixed: the answer's is only recorded in g, and the restart
// refuses a connection whose agent picked another.
func (c *Client) onInitAnswered(g *agentConn, raw []byte) {
	var msg struct {
		Result struct {
			ProtocolVersion json.RawMessage `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(raw, &msg) != nil {
		return
	}
	if string(msg.Result.ProtocolVersion) == "2" {
		if offered, err := c.opts.offeredVersion(); err == nil && offered >= 2 {
			g.version = 2
			if g.n == 1 {
				c.version = 2
			}
		}
	}
}
