package longterm

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmem/agentmem/embed/hash"
)

// killHelperEnv selects the writer mode of TestKill9Helper: the value is the
// store directory.
const killHelperEnv = "LONGTERM_KILL9_DIR"

// TestKill9Helper is not a test on its own: run by TestKill9 in a child
// process, it adds records in a loop (single Adds and batches) and prints
// "ack ID" after each acknowledged one, until it is killed.
func TestKill9Helper(t *testing.T) {
	dir := os.Getenv(killHelperEnv)
	if dir == "" {
		t.Skip("helper process for TestKill9")
	}
	emb, err := hash.New(64)
	if err != nil {
		panic(err)
	}
	// A small snapshot interval, so that kills also land in snapshots.
	m, err := Open(t.Context(), dir, emb, WithSnapshotEvery(16))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	round := os.Getenv(killHelperEnv + "_ROUND")
	out := bufio.NewWriter(os.Stdout)
	pad := strings.Repeat("Padding makes each record span several pages. ", 100)
	for i := 0; ; i++ {
		if i%5 == 4 {
			recs := make([]Record, 8)
			for j := range recs {
				recs[j] = Record{ID: fmt.Sprintf("r%s-b%d-%d", round, i, j), Text: fmt.Sprintf("batch %d item %d. %s", i, j, pad)}
			}
			ids, err := m.AddBatch(t.Context(), recs)
			if err != nil {
				fmt.Println("add:", err)
				os.Exit(4)
			}
			for _, id := range ids {
				fmt.Fprintln(out, "ack", id)
			}
		} else {
			id, err := m.Add(t.Context(), Record{ID: fmt.Sprintf("r%s-s%d", round, i), Text: fmt.Sprintf("single %d. %s", i, pad)})
			if err != nil {
				fmt.Println("add:", err)
				os.Exit(4)
			}
			fmt.Fprintln(out, "ack", id)
		}
		out.Flush()
	}
}

// TestKill9 kills a writing process with SIGKILL at several points and
// checks after each that every acknowledged record is in the store.
func TestKill9(t *testing.T) {
	n := killRounds(t, "TestKill9Helper", killHelperEnv, []int{5, 23, 41, 3, 60, 11, 37, 2, 52, 17},
		func(m *Memory, round int, acked map[string]bool) {
			require.GreaterOrEqual(t, m.Len(), len(acked))
		})
	t.Logf("%d acknowledged records survived 10 kills", n)
}

// killRounds runs the helper test in a child process (env names the
// store directory, env_ROUND the round), once per element of kills: it
// kills the child with SIGKILL after that many acknowledged ("ack ID")
// writes, opens the store, checks that every write acknowledged so far is
// there and that a writer's open removed temporary files, calls check,
// and closes the store (odd rounds, writing a snapshot) or leaves it as a
// crash would. It returns how many writes were acknowledged.
func killRounds(t *testing.T, helper, env string, kills []int, check func(m *Memory, round int, acked map[string]bool)) int {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[string]bool{}
	for round, after := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), env+"="+dir, fmt.Sprintf("%s_ROUND=%d", env, round))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(stdout)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			id, ok := strings.CutPrefix(line, "ack ")
			require.True(t, ok, "helper said %q", line)
			acked[id] = true
			n++
			if n == after {
				// Let it get into the next write, then kill it.
				time.Sleep(time.Duration(round) * 300 * time.Microsecond)
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				break
			}
		}
		// Drain what was printed before the kill: those were acknowledged too.
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				acked[id] = true
			}
		}
		_ = cmd.Wait()

		emb, err := hash.New(64)
		require.NoError(t, err)
		m, err := Open(t.Context(), dir, emb)
		require.NoError(t, err, "round %d", round)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			assert.NotContains(t, e.Name(), ".tmp-", "round %d: a writer's open removes temporary files", round)
		}
		for id := range acked {
			_, ok := m.Get(id)
			assert.True(t, ok, "round %d: acknowledged %s lost", round, id)
		}
		check(m, round, acked)
		if round%2 == 1 {
			require.NoError(t, m.Close()) // snapshot
		} else {
			crash(m) // leave without a snapshot
		}
	}
	return len(acked)
}
