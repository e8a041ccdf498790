package remote_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net/http"

	"github.com/acpclient/acp/remote"
)

// fastWS serves an agent over WebSocket for the benchmarks: a minimal RFC
// 6455 server that, unlike coder/websocket's (one flushed write per
// message), writes the frames of a burst of agent output in one write, as
// a server tuned for throughput does, so that the benchmark measures the
// client. It handles what the client sends: unfragmented masked text
// frames, and the close frame (answered, then the connection ends).
func fastWS(agent func() (io.ReadCloser, io.WriteCloser)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw := remote.AcceptWS(w, r, "Acp-Connection-Id: bench\r\n")
		if conn == nil {
			return
		}
		defer conn.Close()
		rw.Flush()
		from, to := agent()
		done := make(chan struct{})
		go func() {
			defer close(done)
			br := bufio.NewReaderSize(from, 64<<10)
			bw := bufio.NewWriterSize(conn, 64<<10)
			var hdr [10]byte
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				line = bytes.TrimSpace(line)
				hdr[0] = 0x81
				n := 2
				switch l := len(line); {
				case l < 126:
					hdr[1] = byte(l)
				case l < 1<<16:
					hdr[1] = 126
					binary.BigEndian.PutUint16(hdr[2:], uint16(l))
					n = 4
				default:
					hdr[1] = 127
					binary.BigEndian.PutUint64(hdr[2:], uint64(l))
					n = 10
				}
				bw.Write(hdr[:n])
				bw.Write(line)
				if br.Buffered() == 0 && bw.Flush() != nil {
					return
				}
			}
		}()
		br := rw.Reader
		for {
			var h [2]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				break
			}
			l := uint64(h[1] & 0x7f)
			switch l {
			case 126:
				var b [2]byte
				io.ReadFull(br, b[:])
				l = uint64(binary.BigEndian.Uint16(b[:]))
			case 127:
				var b [8]byte
				io.ReadFull(br, b[:])
				l = binary.BigEndian.Uint64(b[:])
			}
			var mask [4]byte
			io.ReadFull(br, mask[:])
			p := make([]byte, l)
			if _, err := io.ReadFull(br, p); err != nil {
				break
			}
			for i := range p {
				p[i] ^= mask[i%4]
			}
			if h[0]&0x0f == 0x8 { // close: answer it
				conn.Write([]byte{0x88, 0x02, 0x03, 0xe8})
				break
			}
			if h[0]&0x0f == 0x1 {
				to.Write(append(p, '\n'))
			}
		}
		to.Close()
		from.Close()
		conn.Close()
		<-done
	})
}
