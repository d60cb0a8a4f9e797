package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/agentmem/agentmem/embed/hash"
	"github.com/agentmem/agentmem/memory"
	_ "github.com/agentmem/agentmem/vdb/inmem"
)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"./mem", "./mem"},
		{"/var/lib/agentmem", "/var/lib/agentmem"},
		{"postgres://db.example/memory?schema=team", "postgres://db.example/memory?schema=team"},
		{"postgres://agent@db.example/memory", "postgres://agent@db.example/memory"},
		{"postgres://agent:s3cret@db.example:5432/memory?schema=team", "postgres://agent:xxxxx@db.example:5432/memory?schema=team"},
		{"postgresql://agent:p@ss:w0rd@db/memory", "postgresql://agent:xxxxx@db/memory"},
		{"postgres://agent@db/memory?sslmode=require&password=s3cret&schema=a", "postgres://agent@db/memory?sslmode=require&password=xxxxx&schema=a"},
		{"postgres://agent:s3cret@/memory?host=/tmp/pg&PASSWORD=other", "postgres://agent:xxxxx@/memory?host=/tmp/pg&PASSWORD=xxxxx"},
		{"mysql://root:hunter2@h/db", "mysql://root:xxxxx@h/db"},
		{"pgvector:postgres://u:s3cret@h/db?exact=1", "pgvector:postgres://u:xxxxx@h/db?exact=1"},
		{"pgvector:host=h password=s3cret dbname=d", "pgvector:host=h password=xxxxx dbname=d"},
		{"postgres://u:s3cret@h/db?q=a@b", "postgres://u:xxxxx@h/db?q=a@b"},
		{"postgres://u:pa/ss@w@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://h/db?host=/tmp/a:b@c", "postgres://h/db?host=/tmp/a:b@c"},
		{"postgres://u:12?x@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:p#w@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://h:5432/db?sslmode=require", "postgres://h:5432/db?sslmode=require"},
		{"postgres://u@h:5432/db", "postgres://u@h:5432/db"},
	} {
		assert.Equal(t, tc.want, Redact(tc.in), tc.in)
	}
}

func TestCheckTarget(t *testing.T) {
	for _, ok := range []string{"mem", "./a/b", "postgres://h/db", "postgresql://u:pw@h/db?schema=x", "a:b"} {
		assert.NoError(t, CheckTarget(ok), ok)
	}
	for _, bad := range []string{"mysql://root:hunter22@h/db", "s3://bucket/mem", "file:///tmp/mem", "dir/with://inside"} {
		err := CheckTarget(bad)
		require.ErrorIs(t, err, memory.ErrInvalidArgument, bad)
		assert.ErrorContains(t, err, "postgres://", "the error names the accepted forms")
		assert.NotContains(t, err.Error(), "hunter22")
	}
}

// TestOpenURL_RefusesOtherURLs: no store directory is made under a URL's
// name, by any entry point.
func TestOpenURL_RefusesOtherURLs(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := t.Context()
	for _, target := range []string{"mysql://root:hunter22@h/db", "s3://bucket", "postgres://u:hunter22@h/db"} {
		cfg := Config{Create: true, Logger: quietLogger()}
		if !IsURL(target) {
			_, err := OpenURL(ctx, target, cfg)
			require.ErrorIs(t, err, memory.ErrInvalidArgument, target)
			assert.NotContains(t, err.Error(), "hunter22")
			_, err = Verify(ctx, target, cfg)
			require.ErrorIs(t, err, memory.ErrInvalidArgument, target)
		}
		_, err := Open(ctx, target, cfg)
		require.ErrorIs(t, err, memory.ErrInvalidArgument, target)
		_, err = Repair(ctx, target, cfg)
		require.ErrorIs(t, err, memory.ErrInvalidArgument, target)
		_, err = Migrate(ctx, target, MigrateConfig{})
		require.ErrorIs(t, err, memory.ErrInvalidArgument, target)
		_, _, _, err = Info(target)
		require.ErrorIs(t, err, memory.ErrInvalidArgument, target)
	}
	_, err := Repair(ctx, "postgres://u:hunter22@h/db", Config{})
	assert.ErrorContains(t, err, "repair applies to store directories")
	assert.NotContains(t, err.Error(), "hunter22")
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was created")
}

// TestOpenURL_FailedConnectionHidesPassword: the errors of a server that
// cannot be reached and of a bad URL name where, never the password.
func TestOpenURL_FailedConnectionHidesPassword(t *testing.T) {
	ctx := t.Context()
	for _, target := range []string{
		"postgres://agent:hunter22@127.0.0.1:1/memory?connect_timeout=2",
		"postgresql://agent@127.0.0.1:1/memory?password=hunter22&connect_timeout=2",
		"postgres://agent:hunter22@127.0.0.1:badport/memory",
		"postgres://agent:hunter22@xy@127.0.0.1:badport/memory",
		"postgres://agent:xy@hunter22@127.0.0.1:1/memory?connect_timeout=2",
	} {
		_, err := OpenURL(ctx, target, Config{Create: true, Logger: quietLogger()})
		require.Error(t, err, target)
		assert.NotContains(t, err.Error(), "hunter22", target)
		rep, err := Verify(ctx, target, Config{Logger: quietLogger()})
		require.Error(t, err, target)
		assert.NotContains(t, err.Error(), "hunter22", target)
		assert.NotContains(t, fmt.Sprint(rep), "hunter22", target)
	}
}

func TestRedactError(t *testing.T) {
	base := fmt.Errorf("connect to postgres://agent:hunter22@h/db failed: %w", fs.ErrNotExist)
	err := redactError(base, "postgres://agent:hunter22@h/db")
	assert.Equal(t, "connect to postgres://agent:xxxxx@h/db failed: file does not exist", err.Error())
	assert.ErrorIs(t, err, fs.ErrNotExist, "the chain is kept")
	plain := errors.New("no password here")
	assert.Same(t, plain, redactError(plain, "postgres://agent:hunter22@h/db"))
	assert.Nil(t, redactError(nil, "postgres://agent:hunter22@h/db"))
	// Encoded and decoded forms both go; a short password is left alone.
	err = redactError(errors.New("pw p@ss%word!! or p%40ss%25word!!"), "postgres://u:p%40ss%25word!!@h/db")
	assert.Equal(t, "pw xxxxx or xxxxx", err.Error())
	short := errors.New("dbname=db")
	assert.Same(t, short, redactError(short, "postgres://u:db@h/db"))
}

// TestOpen_DirectoryStoreStats: a directory store's Stats are its Info,
// with a backend spec's password redacted.
func TestOpen_DirectoryStoreStats(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	m, err := OpenURL(t.Context(), dir, Config{Create: true, Kind: Long, Logger: quietLogger()})
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Add(t.Context(), memory.Record{Text: "the wifi password is tulip-42", Time: time.Now()})
	require.NoError(t, err)
	st := m.Stats()
	assert.Equal(t, Long, m.Kind())
	assert.Equal(t, Stats{Store: dir, Kind: Long, Records: 1, Chunks: 1, Vectors: 1, Embedder: DefaultEmbedder, Dim: 512,
		Backend: DefaultBackend, TopK: 5}, st)
	assert.False(t, strings.Contains(st.Store, "://"))
}

// TestOpen_BackendSpecHidesPassword: a backend spec that cannot be opened
// is named without the password of the DSN it holds.
func TestOpen_BackendSpecHidesPassword(t *testing.T) {
	for _, spec := range []string{"nosuch:postgres://u:hunter22@h/db", "pgvector:postgres://u:hunter22@127.0.0.1:1/db?connect_timeout=2"} {
		_, err := Open(t.Context(), filepath.Join(t.TempDir(), "s"), Config{Create: true, Backend: spec, Logger: quietLogger()})
		require.Error(t, err, spec)
		assert.NotContains(t, err.Error(), "hunter22", spec)
	}
}
