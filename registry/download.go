package registry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// download writes the body at u to w, refusing more than MaxArchiveBytes
// and giving up when the host sends nothing for StallTimeout (waiting for
// the response included). There is no bound on the total time: a slow
// download that keeps making progress is not cut. report, when not nil,
// is called with the bytes received and the total (-1 when unknown): once
// when the response arrives, then after each read that returned bytes.
func download(parent context.Context, o *Options, u *url.URL, w io.Writer, report func(done, total int64)) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	progress := func() {}
	if d := o.StallTimeout; d > 0 {
		stalled := fmt.Errorf("%w: %s sent nothing for StallTimeout (%v)", ErrTimeout, u.Redacted(), d)
		timer := time.AfterFunc(d, func() { cancel(stalled) })
		defer timer.Stop()
		progress = func() { timer.Reset(d) }
	}
	// The stall's cause replaces the transport's error, which only says
	// the request was canceled.
	failed := func(err error) error {
		if parent.Err() == nil && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := o.httpClient().Do(req)
	if err != nil {
		return failed(fetchError(u, err))
	}
	defer resp.Body.Close()
	progress()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading %s: %s", u.Redacted(), resp.Status)
	}
	if resp.ContentLength > o.MaxArchiveBytes {
		return limitExceeded("%s is %d bytes, more than MaxArchiveBytes (%d)", u.Redacted(), resp.ContentLength, o.MaxArchiveBytes)
	}
	total := resp.ContentLength
	if total < 0 {
		total = -1
	}
	var done int64
	if report != nil {
		report(0, total)
	}
	body := &progressReader{r: io.LimitReader(resp.Body, o.MaxArchiveBytes+1), progress: func(n int) {
		progress()
		done += int64(n)
		if report != nil {
			report(done, total)
		}
	}}
	n, err := io.Copy(w, body)
	if err == nil && ctx.Err() != nil {
		// A canceled read can end in a clean EOF (the server saw the
		// connection close and ended the body): the archive may be cut.
		err = ctx.Err()
	}
	if err != nil {
		return failed(fmt.Errorf("downloading %s: %w", u.Redacted(), err))
	}
	if n > o.MaxArchiveBytes {
		return limitExceeded("%s is more than MaxArchiveBytes (%d bytes)", u.Redacted(), o.MaxArchiveBytes)
	}
	return nil
}

// progressReader calls progress after each read that returned bytes.
type progressReader struct {
	r        io.Reader
	progress func(n int)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress(n)
	}
	return n, err
}
