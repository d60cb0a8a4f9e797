// Package memorytest is the conformance suite for the memory contract of
// package memory, as vdb/vdbtest is for vector databases and in the style of
// testing/slogtest and nettest.TestConn: an implementation's test calls [Run]
// with a constructor, and the suite runs one subtest per rule, each against
// a fresh, empty memory. Failure messages start with "rule:" and say the
// rule that was broken.
//
//	func TestConformance(t *testing.T) {
//		memorytest.Run(t, func(t *testing.T) memorytest.Subject {
//			m, err := longterm.New(t.Context(), emb)
//			require.NoError(t, err)
//			t.Cleanup(func() { m.Close() })
//			return memorytest.Subject{Memory: m}
//		})
//	}
//
// The suite checks what the memory implements: [memory.Memory] always,
// and, found by type assertion, [memory.Records], [memory.Querier],
// [memory.Lister] and io.Closer. A rule that needs an interface the memory
// lacks is skipped with a message that names the interface. A persistent
// memory offers [Subject.Reopen] ([OpenDir] makes one for a store in a
// directory), and the Reopen rule then checks that everything written
// survives closing and reopening the store.
//
// Where package memory's documentation is silent the suite checks what
// memory/longterm and memory/postgres document alike: a record's text,
// id, namespace, speaker or tag that is not valid UTF-8 is refused with
// [memory.ErrInvalidArgument] while a question is repaired, not refused;
// a record's text with no letter or digit is refused (with
// [memory.ErrEmptyText] or [memory.ErrInvalidArgument]); a query or list
// whose To is before its From finds nothing (or is refused with
// [memory.ErrInvalidArgument]); an empty AddBatch stores nothing; an id
// is the store's, so adding it in another namespace moves the record; a
// Time is kept to the microsecond at least; a text with a NUL byte is
// stored as given or refused with [memory.ErrInvalidArgument]; a write
// with a cancelled context fails with context.Canceled and changes
// nothing, or succeeds whole; a call made while the memory closes
// succeeds or fails with [memory.ErrClosed]; a hit's neighbours are the
// records written before and after it, in the order written.
//
// Run a single rule with -run 'TestConformance/Forget'.
package memorytest

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentmem/agentmem/memory"
)

// Subject is a memory under test, as [Open] returns it.
type Subject struct {
	// Memory is the memory, fresh and empty. It may implement
	// memory.Records, memory.Querier, memory.Lister and io.Closer.
	Memory memory.Memory
	// Reopen, for a persistent memory, opens the same store again and
	// returns the new handle, or the error opening it failed with (which
	// fails the rule: a store that was closed must open again). nil means
	// the memory is not persistent (then the Reopen rule is skipped,
	// saying so). The suite closes the previous handle (when it is an
	// io.Closer) before it calls Reopen, and may call Reopen several
	// times. Like Open, Reopen registers the handle's Close with
	// t.Cleanup.
	Reopen func() (memory.Memory, error)
}

// Open returns a new, empty memory for one subtest. It should fail the
// test (t.Fatal, require) if the memory cannot be made, register its Close
// with t.Cleanup, and keep any files under t.TempDir(). The suite calls
// Open once per rule.
type Open func(t *testing.T) Subject

// OpenDir returns an Open of a memory kept in a directory, with Reopen:
// each rule's store is a fresh t.TempDir() that open opens (creating the
// store) with the rule's context, and Subject.Reopen calls open on the
// same directory again. Each memory open returns is closed (when it is an
// io.Closer) as the rule ends.
//
//	memorytest.Run(t, memorytest.OpenDir(func(ctx context.Context, dir string) (memory.Memory, error) {
//		return longterm.Open(ctx, dir, emb)
//	}))
func OpenDir(open func(ctx context.Context, dir string) (memory.Memory, error)) Open {
	return func(t *testing.T) Subject {
		dir := t.TempDir()
		reopen := func() (memory.Memory, error) {
			m, err := open(t.Context(), dir)
			if err != nil {
				return nil, err
			}
			if c, ok := m.(io.Closer); ok {
				t.Cleanup(func() { c.Close() })
			}
			return m, nil
		}
		m, err := reopen()
		if err != nil {
			t.Fatalf("memorytest: open the store in %s: %v", dir, err)
		}
		return Subject{Memory: m, Reopen: reopen}
	}
}

// An Option adapts the suite to an implementation.
type Option func(*config)

type config struct {
	noNamespaces bool
	known        map[string]string
}

// NoNamespaces declares a memory that keeps no namespaces (a record's
// Namespace is ignored): the Namespaces rule is skipped, saying so.
func NoNamespaces() Option {
	return func(c *config) { c.noNamespaces = true }
}

// KnownFailure declares that rule (a subtest name of [Run]) fails on this
// implementation for a known reason, such as an open issue. The rule
// still runs: its failures are logged and the subtest is skipped with
// reason; once the rule passes, the subtest fails, so that the
// declaration is removed when the bug is fixed.
func KnownFailure(rule, reason string) Option {
	return func(c *config) {
		if c.known == nil {
			c.known = map[string]string{}
		}
		c.known[rule] = reason
	}
}

// Run runs the conformance suite against the memories open returns, as
// subtests named after the rule they check:
//
//   - memory.Memory: SearchEmpty, UpdateSearch, UpdateEmptyText,
//     QueryTextRepaired, Concurrent, ContextCancelled, CloseIdempotent,
//     UseAfterClose, CloseWhileBusy and Reopen (when Subject.Reopen is
//     set);
//   - memory.Records: AddGet, GeneratedIDs, AddSameIDReplaces, AddBatch,
//     AddBatchAtomic, Forget, AddEmptyText, InvalidUTF8, ReturnsCopies,
//     ConcurrentSameID;
//   - memory.Querier: QueryFindsText, QueryModes, QueryK, QueryMinScore,
//     QueryInvalid, QueryTimeRange, QueryNeighbours, Namespaces;
//   - memory.Lister: ListOrder, ListPaging, ListFilter;
//   - memory.Facts: FactsDuplicates, FactsNearDuplicates, FactsSupersede, FactsConflict,
//     FactsValidity, FactsReopen.
//
// Rules check every interface the memory implements: Forget, for one,
// checks Search, Query and List after the record is forgotten.
func Run(t *testing.T, open Open, opts ...Option) {
	t.Helper()
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	for name := range c.known {
		if findRule(name) == nil {
			t.Errorf("memorytest: KnownFailure names no rule %q", name)
		}
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			e := &env{open: func() Subject { return open(t) }, cfg: c}
			reason, known := c.known[r.name]
			if !known {
				e.t = t
				r.check(e)
				return
			}
			rec := record(t, func(tt tb) {
				e.t = tt
				r.check(e)
			})
			if msg, skip := rec.verdict(r.name, reason); skip {
				t.Skip(msg)
			} else {
				t.Error(msg)
			}
		})
	}
}

// verdict says what a rule declared a KnownFailure comes to: a skip that
// gives the reason and the rule's failures, a skip that gives the rule's
// own reason for skipping, or (skip false) the error that the rule passes
// now.
func (r *recorder) verdict(rule, reason string) (msg string, skip bool) {
	switch {
	case r.failed:
		return fmt.Sprintf("known failure: %s\n%s", reason, r.report()), true
	case r.skipped:
		return r.report(), true
	}
	return fmt.Sprintf("memorytest: rule %s passes now: remove KnownFailure(%q, %q)", rule, rule, reason), false
}

// tb is what a rule reports to: *testing.T, or a recorder when a failure
// is expected. testify's assert and require accept it.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
	Context() context.Context
}

// A rule is one subtest of Run.
type rule struct {
	name  string
	check func(*env)
}

// rules are Run's subtests, in order. The lists are in the files that
// define their checks.
var rules = slices.Concat(memoryRules, recordRules, queryRules, listRules, factRules)

func findRule(name string) *rule {
	for i := range rules {
		if rules[i].name == name {
			return &rules[i]
		}
	}
	return nil
}

// env is a rule's view of the test: where it reports, and how it opens a
// memory.
type env struct {
	t    tb
	open func() Subject
	cfg  *config
}

func (e *env) ctx() context.Context { return e.t.Context() }

// subject is an opened memory with the interfaces it implements.
type subject struct {
	reopen func() (memory.Memory, error)
	m      memory.Memory
	rs     memory.Records // nil if not implemented
	q      memory.Querier // nil if not implemented
	l      memory.Lister  // nil if not implemented
	facts  memory.Facts   // nil if not implemented
	closer io.Closer      // nil if not implemented
}

func newSubject(m memory.Memory, reopen func() (memory.Memory, error)) *subject {
	s := &subject{m: m, reopen: reopen}
	s.rs, _ = m.(memory.Records)
	s.q, _ = m.(memory.Querier)
	s.l, _ = m.(memory.Lister)
	s.facts, _ = m.(memory.Facts)
	s.closer, _ = m.(io.Closer)
	return s
}

// capability is an optional interface a rule needs.
type capability int

const (
	needRecords capability = 1 << iota
	needQuerier
	needLister
	needCloser
	needFacts
	needNamespaceHolder
)

// fresh opens a memory, skipping the rule (saying why) when it lacks an
// interface the rule needs.
func (e *env) fresh(need capability) *subject {
	e.t.Helper()
	sub := e.open()
	if sub.Memory == nil {
		e.t.Fatalf("memorytest: Open returned a Subject without a Memory")
	}
	s := newSubject(sub.Memory, sub.Reopen)
	var missing []string
	if need&needRecords != 0 && s.rs == nil {
		missing = append(missing, "memory.Records")
	}
	if need&needQuerier != 0 && s.q == nil {
		missing = append(missing, "memory.Querier")
	}
	if need&needLister != 0 && s.l == nil {
		missing = append(missing, "memory.Lister")
	}
	if need&needCloser != 0 && s.closer == nil {
		missing = append(missing, "io.Closer")
	}
	if need&needFacts != 0 && s.facts == nil {
		missing = append(missing, "memory.Facts")
	}
	if _, ok := sub.Memory.(memory.NamespaceHolder); need&needNamespaceHolder != 0 && !ok {
		missing = append(missing, "memory.NamespaceHolder")
	}
	if len(missing) > 0 {
		e.t.Skipf("memorytest: %T does not implement %s: rule not applicable", sub.Memory, strings.Join(missing, " or "))
	}
	return s
}

// recorder is a tb that records failures instead of failing the test, for
// KnownFailure and for the suite's own tests, which check that each rule
// fails on a memory that breaks it. Fatalf, FailNow and Skipf end the
// rule's goroutine, as they end a test's.
type recorder struct {
	t       *testing.T
	mu      sync.Mutex
	failed  bool
	skipped bool
	msgs    []string
}

func (r *recorder) note(failed, skipped bool, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = r.failed || failed
	r.skipped = r.skipped || skipped
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) { r.note(true, false, format, args...) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.note(true, false, format, args...)
	runtime.Goexit()
}

func (r *recorder) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.note(false, true, format, args...)
	runtime.Goexit()
}

func (r *recorder) Logf(format string, args ...any) { r.note(false, false, format, args...) }

func (r *recorder) Context() context.Context { return r.t.Context() }

// report returns what the rule said, one message a line: of a testify
// message, its Messages and Error.
func (r *recorder) report() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.msgs))
	for i, msg := range r.msgs {
		out[i] = brief(msg)
	}
	return strings.Join(out, "\n")
}

// brief returns "Messages: Error" of a testify message (its Error up to
// a Diff), or msg itself.
func brief(msg string) string {
	var text string
	var errs []string
	inErr := false
	for line := range strings.Lines(msg) {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "Messages:"); ok {
			text, inErr = strings.TrimSpace(v), false
		} else if v, ok := strings.CutPrefix(line, "Error:"); ok {
			errs, inErr = append(errs, strings.TrimSpace(v)), true
		} else if strings.HasPrefix(line, "Test:") || strings.HasPrefix(line, "Diff:") {
			inErr = false
		} else if inErr && line != "" {
			errs = append(errs, line)
		}
	}
	err := strings.Join(errs, " ")
	switch {
	case text != "" && err != "":
		return text + ": " + err
	case text != "" || err != "":
		return text + err
	}
	return strings.TrimSpace(msg)
}

// record runs check against a recorder in a goroutine of its own and
// returns the recorder when check has returned or ended the goroutine.
func record(t *testing.T, check func(tb)) *recorder {
	r := &recorder{t: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r
}
