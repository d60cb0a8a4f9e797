package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLI_VersionStamped: a binary built as make build builds it
// (-ldflags -X main.buildVersion=…) reports that version in --version and
// as its MCP server's version (they said "(devel)" and "dev"); a plain
// build says devel.
func TestCLI_VersionStamped(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "agentmem")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.buildVersion=v9.8.7-test", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	r := runBin(t, bin, ".", "--version")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^agentmem version v9\.8\.7-test .*go1\.`, r.stdout)

	c := mcp.NewClient(&mcp.Implementation{Name: "version-test", Version: "1"}, nil)
	cmd := exec.Command(bin, "serve", "--stdio", "--store", filepath.Join(t.TempDir(), "s"))
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	info := cs.InitializeResult().ServerInfo
	assert.Equal(t, "agentmem", info.Name)
	assert.Equal(t, "v9.8.7-test", info.Version)

	plain := runCLI(t, "", "--version")
	assert.Contains(t, plain.stdout, "agentmem version devel")
}
