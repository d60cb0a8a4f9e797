module github.com/agentmem/agentmem/memory/window/tokens/measure

go 1.26

require (
	github.com/agentmem/agentmem v0.0.0
	github.com/pkoukk/tiktoken-go v0.1.8
	github.com/pkoukk/tiktoken-go-loader v0.0.2
)

require (
	github.com/dlclark/regexp2 v1.11.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
)

replace github.com/agentmem/agentmem => ../../../..
