package otelacp

import (
	"strconv"
	"unicode/utf8"

	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// What the agent says must not decide how much telemetry there is. Its
// strings (method names, tool names and titles, kinds, statuses, stop
// reasons, ids, error messages) reach spans and metrics here: span names
// are fixed or come from the sets below, every string attribute is
// clipped to MaxAttributeBytes, and a metric attribute is one of the
// values this package knows or "other" (error.type: _OTHER), so the
// number of series is bounded by those sets whatever the agent sends.

// MaxAttributeBytes bounds every string attribute value (and span status
// description, and exception message) this package records: a longer one
// is cut at a UTF-8 boundary and ends in "…", within the bound.
const MaxAttributeBytes = 1024

// otherValue is the metric attribute value of a tool kind, tool status,
// stop reason or permission outcome this package does not know.
const otherValue = "other"

// clip returns s cut to MaxAttributeBytes.
func clip(s string) string {
	if len(s) <= MaxAttributeBytes {
		return s
	}
	const ellipsis = "…"
	n := MaxAttributeBytes - len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}

// str is key=clip(v).
func str(key attribute.Key, v string) attribute.KeyValue { return key.String(clip(v)) }

// known returns v when it is one of the known values, else otherValue.
func known[T ~string](v T, set map[T]bool) string {
	if set[v] {
		return string(v)
	}
	return otherValue
}

var (
	toolKinds = map[schema.ToolKind]bool{schema.ToolKindRead: true, schema.ToolKindEdit: true, schema.ToolKindDelete: true,
		schema.ToolKindMove: true, schema.ToolKindSearch: true, schema.ToolKindExecute: true, schema.ToolKindThink: true,
		schema.ToolKindFetch: true, schema.ToolKindSwitchMode: true, schema.ToolKindOther: true}
	toolStatuses = map[schema.ToolCallStatus]bool{schema.ToolCallStatusPending: true, schema.ToolCallStatusInProgress: true,
		schema.ToolCallStatusCompleted: true, schema.ToolCallStatusFailed: true, schema.ToolCallStatusCancelled: true}
	stopReasons = map[schema.StopReason]bool{schema.StopReasonEndTurn: true, schema.StopReasonMaxTokens: true,
		schema.StopReasonMaxTurnRequests: true, schema.StopReasonRefusal: true, schema.StopReasonCancelled: true,
		schema.StopReasonError: true}
	permissionOutcomes = map[string]bool{string(schema.OutcomeSelected): true, string(schema.OutcomeCancelled): true, "error": true}
	errorCodes         = map[int64]bool{schema.CodeParseError: true, schema.CodeInvalidRequest: true, schema.CodeMethodNotFound: true,
		schema.CodeInvalidParams: true, schema.CodeInternalError: true, schema.CodeRequestCancelled: true,
		schema.CodeAuthRequired: true, schema.CodeResourceNotFound: true}
)

// methods are the methods of the protocol (the acp package's Method
// constants): a request's span is named after its method only when the
// method is one of them.
var methods = map[string]bool{}

func init() {
	for _, m := range []string{
		schema.MethodInitialize, schema.MethodAuthenticate, schema.MethodLogout,
		schema.MethodSessionNew, schema.MethodSessionLoad, schema.MethodSessionResume, schema.MethodSessionList,
		schema.MethodSessionClose, schema.MethodSessionDelete, schema.MethodSessionFork, schema.MethodSessionSetMode,
		schema.MethodSessionSetConfigOption, schema.MethodSessionSetModel, schema.MethodSessionPrompt,
		schema.MethodSessionCancel, schema.MethodSessionUpdate, schema.MethodSessionRequestPermission,
		schema.MethodSessionArchive, schema.MethodSessionUnarchive, schema.MethodSessionStatus, schema.MethodSessionSetTitle,
		schema.MethodAuthStatus, schema.MethodAuthStatusUpdate,
		schema.MethodFSReadTextFile, schema.MethodFSWriteTextFile,
		schema.MethodTerminalCreate, schema.MethodTerminalOutput, schema.MethodTerminalRelease,
		schema.MethodTerminalWaitForExit, schema.MethodTerminalKill,
		schema.MethodElicitationCreate, schema.MethodElicitationComplete, schema.MethodCancelRequest, schema.MethodMCPMessage,
		schema.MethodNESStart, schema.MethodNESSuggest, schema.MethodNESAccept, schema.MethodNESReject, schema.MethodNESClose,
		schema.MethodDocumentDidOpen, schema.MethodDocumentDidChange, schema.MethodDocumentDidClose,
		schema.MethodDocumentDidSave, schema.MethodDocumentDidFocus,
	} {
		methods[m] = true
	}
}

// methodOther is the rpc.method, and span name, of a method the protocol
// does not define (an extension method, or whatever an agent sends).
const methodOther = "_OTHER"

// method returns the span name of a request of method m and its rpc.*
// attributes: rpc.method=m for a method of the protocol; else
// rpc.method=_OTHER and rpc.method_original=m (clipped), as the RPC
// semantic conventions ask of a method the instrumentation does not know.
func method(m string) (string, []attribute.KeyValue) {
	if methods[m] {
		return m, []attribute.KeyValue{semconv.RPCSystemNameJSONRPC, semconv.RPCMethod(m)}
	}
	return methodOther, []attribute.KeyValue{semconv.RPCSystemNameJSONRPC, semconv.RPCMethod(methodOther), semconv.RPCMethodOriginal(clip(m))}
}

// errorCode is the error.type of an agent's JSON-RPC error code: the code
// when it is one of the protocol's, else _OTHER (the error's message,
// on the span, has the code).
func errorCode(code int64) string {
	if errorCodes[code] {
		return strconv.FormatInt(code, 10)
	}
	return semconv.ErrorTypeOther.Value.AsString()
}
