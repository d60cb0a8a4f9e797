package agent

import "context"

// Roles of a [Message].
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// A Message is one message of a conversation sent to a [Model]. Its JSON
// form ({"role": …, "content": …}) is the one chat APIs share.
type Message struct {
	Role    string `json:"role"` // RoleSystem, RoleUser or RoleAssistant
	Content string `json:"content"`
}

// A Model answers a conversation: the agent's one dependency on a language
// model. Package agent/ollama adapts an Ollama server; a test can script one
// in a few lines.
type Model interface {
	// Chat sends msgs and calls fn with each piece of the answer, in order,
	// as it arrives (a model that does not stream calls fn once). If fn
	// returns an error, Chat stops and returns it. Chat returns nil only
	// when the model said its answer is complete; a stream that ends before
	// that is an error wrapping [ErrIncomplete]. Other failures should wrap
	// [ErrModel], [ErrModelNotFound] or [ErrUnreachable], which say what to
	// do; an error that wraps none is returned by the agent wrapped in
	// [ErrModel].
	Chat(ctx context.Context, msgs []Message, fn func(chunk string) error) error
}
