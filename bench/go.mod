module github.com/agentmem/agentmem/bench

go 1.26.0

replace github.com/agentmem/agentmem => ../

require (
	github.com/agentmem/agentmem v0.0.0-00010101000000-000000000000
	github.com/philippgille/chromem-go v0.7.0
)

require (
	golang.org/x/sys v0.48.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
