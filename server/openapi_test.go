package server

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenAPI_EveryOperationAnswers4XX: every operation of the API's
// description lists a 4XX answer (/healthz and /openapi.json had none:
// they answer 405 to another method), and the description names a server
// and its address.
func TestOpenAPI_EveryOperationAnswers4XX(t *testing.T) {
	data, err := os.ReadFile("openapi.json")
	require.NoError(t, err)
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
		Paths   map[string]map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Servers)
	assert.Equal(t, "http://"+DefaultAddr, doc.Servers[0].URL)
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			if method == "parameters" {
				continue
			}
			var op struct{ Responses map[string]json.RawMessage }
			require.NoError(t, json.Unmarshal(raw, &op), "%s %s", method, path)
			has4xx := false
			for code := range op.Responses {
				has4xx = has4xx || strings.HasPrefix(code, "4")
			}
			assert.True(t, has4xx, "%s %s lists no 4XX answer", method, path)
		}
	}

	ts := start(t, nil)
	for _, path := range []string{"/healthz", "/openapi.json"} {
		r := ts.call(t, "POST", path, "", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, r.status, path)
		assert.Equal(t, CodeMethodNotAllowed, r.errCode(t), path)
	}
}
