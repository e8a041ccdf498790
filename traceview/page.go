package traceview

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"strings"
)

// The page's code and style, inlined into every page. They are files of
// their own so that they can be edited as what they are.
var (
	//go:embed assets/viewer.js
	viewerJS string
	//go:embed assets/viewer.css
	viewerCSS string
)

// csp allows the page's own script and style and nothing else: no
// network, no other script, even if something in the page were misread as
// markup. The hashes pin the inline code.
var csp = "default-src 'none'; img-src data:; style-src '" + hash(viewerCSS) + "'; script-src '" + hash(viewerJS) + "'"

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

func writePage(w io.Writer, p *page, opts Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"" + html.EscapeString(csp) + "\">\n")
	bw.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	bw.WriteString("<meta name=\"generator\" content=\"github.com/acpclient/acp/traceview\">\n")
	bw.WriteString("<title>" + html.EscapeString(strings.ToValidUTF8(opts.Title, "\uFFFD")) + "</title>\n")
	bw.WriteString("<style>" + viewerCSS + "</style>\n</head>\n<body>\n")
	bw.WriteString("<noscript><p>This page renders the trace with JavaScript; without it, the trace is the JSON in the element with id \"trace-data\".</p></noscript>\n")
	bw.WriteString("<div id=\"app\"></div>\n")
	// The data is JSON in a non-executable script element. encoding/json
	// escapes '<', '>' and '&' (and U+2028, U+2029), so no string from the
	// trace can close the element or open a comment.
	bw.WriteString("<script type=\"application/json\" id=\"trace-data\">")
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(p); err != nil {
		return err
	}
	bw.WriteString("</script>\n<script>" + viewerJS + "</script>\n</body>\n</html>\n")
	return bw.Flush()
}
