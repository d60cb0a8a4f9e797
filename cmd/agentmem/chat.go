package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/spf13/cobra"

	"github.com/agentmem/agentmem/agent"
	agentollama "github.com/agentmem/agentmem/agent/ollama"
	"github.com/agentmem/agentmem/memory/window"
	"github.com/agentmem/agentmem/store"
)

// chatStateFile is where `agentmem chat` keeps the conversation window and
// the workflow track, inside the store directory.
const chatStateFile = "chat.json"

// chatState is the session's state file in the store directory, or ""
// for a PostgreSQL store (the session then starts afresh each time).
func chatState(target string) string {
	if store.IsURL(target) {
		return ""
	}
	return filepath.Join(target, chatStateFile)
}

// chatOptions are the chat command's flags.
type chatOptions struct {
	model     string
	system    string
	budget    int
	rounds    int
	windowTok int
	dryRun    bool
	numCtx    int
}

func newChatCmd(ap *app) *cobra.Command {
	var o chatOptions
	cmd := &cobra.Command{
		Use:   "chat [--model MODEL] [--dry-run INPUT]",
		Short: "Chat with an Ollama model that remembers (or print the prompt it would get)",
		Long: `chat talks with an Ollama model. Every input is answered from a prompt built
under a token budget from the system prompt, memories recalled from the store
for that input, the workflow track and the recent rounds of the conversation.
A round is remembered only when it succeeded: it joins the conversation
window, and rounds the window forgets settle into the store's memory. The
window and the workflow track are saved in STORE/` + chatStateFile + ` after every
round, so the conversation continues when chat is started again (not with
a PostgreSQL store, which keeps no such file). With a
long-term store (--memory long), recall is its hybrid search over every
namespace and forgotten rounds are stored in its "default" namespace.

With --dry-run, chat prints the prompt it would send for INPUT and exits; no
model server is needed. It shows what memory contributes.

The server is OLLAMA_HOST (default http://127.0.0.1:11434).

In the session, lines starting with / are commands:
  /task TEXT     set the task on the workflow track
  /step GOAL     begin a workflow step
  /done RESULT   finish the latest step in progress
  /failed RESULT mark the latest step in progress failed
  /now TEXT      note where things stand
  /track         print the workflow track
  /exit          end the session (so does end of input)`,
		Example: `  agentmem chat --model llama3.2 --store ~/.agentmem
  agentmem chat --store ~/.agentmem --dry-run "what is my project called?"
  echo "hello" | agentmem chat --model qwen2.5:7b`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.dryRun && len(args) != 1:
				return usageError{errors.New("chat: --dry-run takes the input as one argument")}
			case !o.dryRun && len(args) != 0:
				return usageError{errors.New("chat: unexpected arguments (the session reads its input from stdin)")}
			case !o.dryRun && strings.TrimSpace(o.model) == "":
				return usageError{errors.New("chat: --model is required (e.g. --model llama3.2)")}
			case o.budget <= 0 || o.rounds <= 0:
				return usageError{fmt.Errorf("chat: --budget and --rounds must be positive")}
			case o.windowTok < window.MinTokens:
				return usageError{fmt.Errorf("chat: --window-tokens must be at least %d", window.MinTokens)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChat(cmd.Context(), cmd, ap, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "Ollama chat model, e.g. llama3.2")
	f.StringVar(&o.system, "system", "You are a helpful assistant. Use the recalled memories and the workflow when they are relevant.", "system prompt")
	f.IntVar(&o.budget, "budget", agent.DefaultBudget, "prompt token budget")
	f.IntVar(&o.rounds, "rounds", window.DefaultMaxRounds, "rounds kept in the conversation window")
	f.IntVar(&o.windowTok, "window-tokens", window.DefaultMaxTokens, "token budget of the conversation window")
	f.IntVar(&o.numCtx, "num-ctx", 0, "model context length sent to Ollama (default: budget + 20% for the estimate's error + 2048 for the answer)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the prompt for the input given as argument; do not call a model")
	return cmd
}

func runChat(ctx context.Context, cmd *cobra.Command, ap *app, o chatOptions, args []string) (err error) {
	// The same store the other commands use, short- or long-term: its
	// embedder and backend unless --embedder/--backend say otherwise. It
	// is both where memories are recalled from and where the rounds the
	// window forgets go.
	mem, err := ap.open(cmd, true, store.Config{})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := mem.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	client, err := api.ClientFromEnvironment()
	if err != nil {
		return err
	}
	tr, err := window.NewTrack()
	if err != nil {
		return err
	}
	w, err := window.New(window.WithMaxRounds(o.rounds), window.WithMaxTokens(o.windowTok), window.WithEvictTo(mem))
	if err != nil {
		return usageError{err}
	}
	model := o.model
	if model == "" {
		model = "(dry run)"
	}
	out := cmd.OutOrStdout()
	opts := []agent.Option{
		agent.WithSystem(o.system), agent.WithMemory(mem), agent.WithWindow(w), agent.WithTrack(tr),
		agent.WithBudget(o.budget),
	}
	state := chatState(ap.store)
	if state != "" {
		opts = append(opts, agent.WithStateFile(state))
	}
	if !ap.json {
		opts = append(opts, agent.WithStream(out))
	}
	// Ollama's default context is smaller than the default budget and it
	// cuts a longer prompt silently: ask for room for the prompt (the
	// budget is an estimate, see tokens.Estimate) and the answer.
	numCtx := o.numCtx
	if numCtx <= 0 {
		numCtx = o.budget + o.budget/5 + 2048
	}
	llm, err := agentollama.New(client, model, agentollama.WithOptions(map[string]any{"num_ctx": numCtx}))
	if err != nil {
		return err
	}
	a, err := agent.New(llm, opts...)
	if err != nil {
		return err
	}
	if o.dryRun {
		p, err := a.Prompt(ctx, args[0])
		if err != nil {
			return err
		}
		if ap.json {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(p)
		}
		_, err = io.WriteString(out, p.String())
		return err
	}
	if err := client.Heartbeat(ctx); err != nil {
		return fmt.Errorf("chat: cannot reach the Ollama server at %s: %w (is `ollama serve` running? set OLLAMA_HOST): %w", ollamaHost(), agent.ErrUnreachable, err)
	}
	return chatLoop(ctx, ap, a, cmd.InOrStdin(), out, cmd.ErrOrStderr())
}

// ollamaHost names the server for messages.
func ollamaHost() string {
	if h := os.Getenv("OLLAMA_HOST"); h != "" {
		return h
	}
	return "http://127.0.0.1:11434 (OLLAMA_HOST is not set)"
}

// chatLoop reads lines until end of input, /exit or ctx ends. A failed round
// is reported and the session goes on; only a cancelled context ends it
// with an error.
func chatLoop(ctx context.Context, ap *app, a *agent.Agent, in io.Reader, out, errOut io.Writer) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	for {
		fmt.Fprint(errOut, "> ")
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(errOut)
			return ctx.Err()
		case line, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(errOut)
			select {
			case err := <-readErr:
				return err
			default:
				return nil
			}
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case line == "/exit" || line == "/quit":
			return nil
		case strings.HasPrefix(line, "/"):
			if err := trackCommand(a.Track(), line, out); err != nil {
				fmt.Fprintln(errOut, errorLine(err))
			} else if state := chatState(ap.store); state != "" {
				if err := a.Save(state); err != nil {
					fmt.Fprintln(errOut, errorLine(err))
				}
			}
			continue
		}
		answer, err := a.Chat(ctx, line)
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			return err
		case errors.Is(err, agent.ErrRemember):
			fmt.Fprintln(errOut, "agentmem: answered, but:", err) // the answer was shown
		default:
			fmt.Fprintln(errOut, "agentmem:", err, "(nothing was remembered from this round)")
		}
		if ap.json && answer != "" {
			_ = json.NewEncoder(out).Encode(map[string]string{"input": line, "answer": answer})
		}
	}
}

// trackCommand runs one /command on the workflow track.
func trackCommand(tr *window.Track, line string, out io.Writer) error {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	latest := func() (int, error) {
		steps := tr.Steps()
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i].Status == window.InProgress {
				return steps[i].ID, nil
			}
		}
		return 0, errors.New("no workflow step in progress (start one with /step GOAL)")
	}
	switch name {
	case "/task":
		tr.SetTask(arg)
	case "/step":
		_, err := tr.Begin(arg, "")
		return err
	case "/done", "/failed":
		id, err := latest()
		if err != nil {
			return err
		}
		status := window.Done
		if name == "/failed" {
			status = window.Failed
		}
		return tr.Finish(id, status, arg)
	case "/now":
		tr.SetPosition(arg)
	case "/track":
		s := tr.Summary()
		if s == "" {
			s = "(the workflow track is empty)"
		}
		_, err := fmt.Fprintln(out, s)
		return err
	default:
		return fmt.Errorf("unknown command %s (try /task, /step, /done, /failed, /now, /track, /exit)", name)
	}
	return nil
}
