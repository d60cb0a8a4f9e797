package recordid_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentmem/agentmem/internal/recordid"
)

func TestNew(t *testing.T) {
	a, b := recordid.New(), recordid.New()
	assert.Regexp(t, `^[0-9a-f]{24}$`, a)
	assert.NotEqual(t, a, b)
}
