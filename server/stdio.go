package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// MaxStdioMessage is the largest MCP message ServeStdio reads (8 MiB,
// twice the largest memory a store takes by default). A larger one is
// answered with a too_large error for its call — a tool result for
// tools/call, a JSON-RPC error otherwise — and skipped without being held
// in memory; the session goes on. (The MCP SDK's own limit ended the
// session.)
const MaxStdioMessage = 8 << 20

// lockedWriter serialises writes to w: the MCP SDK writes each message
// with one Write, and so does stdioReader when it answers a message it
// skipped.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// stdioReader hands the MCP SDK the newline-delimited messages of in that
// are at most max bytes long; each longer one it reads past in constant
// memory and answers itself on out (see MaxStdioMessage).
type stdioReader struct {
	in      io.ReadCloser
	r       *bufio.Reader
	out     io.Writer
	max     int
	log     *slog.Logger
	pending []byte // of the line being handed out
	err     error  // in's, once pending is handed out
}

func newStdioReader(in io.ReadCloser, out io.Writer, max int, log *slog.Logger) *stdioReader {
	return &stdioReader{in: in, r: bufio.NewReaderSize(in, 64<<10), out: out, max: max, log: log}
}

func (s *stdioReader) Close() error { return s.in.Close() }

func (s *stdioReader) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.pending, s.err = s.nextLine()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// nextLine returns the next line of at most max bytes, its newline
// included, answering and skipping every longer one.
func (s *stdioReader) nextLine() ([]byte, error) {
	var line []byte
	for {
		part, err := s.r.ReadSlice('\n')
		if len(line)+len(part) <= s.max {
			line = append(line, part...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return line, err
		}
		// Too long: read past it, noting its id and method.
		var sc frameScanner
		sc.feed(line)
		sc.feed(part)
		n := len(line) + len(part)
		line = nil
		for errors.Is(err, bufio.ErrBufferFull) {
			part, err = s.r.ReadSlice('\n')
			sc.feed(part)
			n += len(part)
		}
		s.tooLarge(&sc, n)
		if err != nil {
			return nil, err
		}
	}
}

// tooLarge answers a skipped message of n bytes whose id and method sc
// found; a message without an id (a notification) gets no answer.
func (s *stdioReader) tooLarge(sc *frameScanner, n int) {
	msg := fmt.Sprintf("%s: the message is %d bytes, at most %d are read over stdio", CodeTooLarge, n, s.max)
	s.log.Warn("mcp: stdio message too large; skipped", "bytes", n, "max", s.max, "id", string(sc.id), "method", string(sc.method))
	if len(sc.id) == 0 || !json.Valid(sc.id) {
		return
	}
	var answer any
	if string(sc.method) == `"tools/call"` {
		answer = map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(sc.id), "result": map[string]any{
			"content": []map[string]string{{"type": "text", "text": msg}}, "isError": true}}
	} else {
		answer = map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(sc.id), "error": map[string]any{
			"code": -32600, "message": msg}}
	}
	b, err := json.Marshal(answer)
	if err == nil {
		_, err = s.out.Write(append(b, '\n'))
	}
	if err != nil {
		s.log.Warn("mcp: answering a too large message", "err", err)
	}
}

// frameScanner finds the values of the top-level "id" and "method" of a
// JSON object fed to it in pieces, keeping only them (each up to 256
// bytes): a JSON-RPC message too large to hold.
type frameScanner struct {
	depth         int
	inStr, esc    bool
	expectKey     bool   // the next string at depth 1 is a key
	strIsKey      bool   // the current string is a key at depth 1
	key           []byte // the last key at depth 1
	capturing     bool   // the current value at depth 1 is id's or method's
	val           []byte
	id, method    []byte
	capturingWhat string
}

const maxCaptured = 256

func (f *frameScanner) feed(b []byte) {
	for _, c := range b {
		f.step(c)
	}
}

func (f *frameScanner) step(c byte) {
	if f.inStr {
		switch {
		case f.esc:
			f.esc = false
		case c == '\\':
			f.esc = true
		case c == '"':
			f.inStr = false
			if f.capturing {
				f.val = appendMax(f.val, c)
				f.finish()
			}
			return
		}
		if f.strIsKey {
			f.key = appendMax(f.key, c)
		} else if f.capturing {
			f.val = appendMax(f.val, c)
		}
		return
	}
	switch c {
	case '{', '[':
		f.depth++
		if f.depth == 1 && c == '{' {
			f.expectKey = true
		}
		if f.capturing && f.depth > 1 { // an object or array: no id
			f.capturing, f.val = false, nil
		}
	case '}', ']':
		if f.depth == 1 && f.capturing {
			f.finish()
		}
		f.depth--
	case '"':
		f.inStr = true
		f.strIsKey = f.depth == 1 && f.expectKey
		if f.strIsKey {
			f.key = f.key[:0]
		} else if f.capturing {
			f.val = appendMax(f.val, c)
		}
	case ':':
		if f.depth == 1 {
			f.expectKey = false
			if k := string(f.key); k == "id" || k == "method" {
				f.capturing, f.capturingWhat, f.val = true, k, nil
			}
		}
	case ',':
		if f.depth == 1 {
			if f.capturing {
				f.finish()
			}
			f.expectKey = true
		}
	case ' ', '\t', '\r', '\n':
		if f.capturing && len(f.val) > 0 {
			f.finish()
		}
	default:
		if f.capturing {
			f.val = appendMax(f.val, c)
		}
	}
}

// finish ends the capture of a value.
func (f *frameScanner) finish() {
	if f.capturingWhat == "id" {
		f.id = f.val
	} else {
		f.method = f.val
	}
	f.capturing, f.val = false, nil
}

func appendMax(b []byte, c byte) []byte {
	if len(b) >= maxCaptured {
		return b
	}
	return append(b, c)
}
