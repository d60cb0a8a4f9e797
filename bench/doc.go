// Package bench compares agentmem's vector backends with other Go vector
// stores on the same data in the same run. It is a separate module so that
// the library itself does not depend on what it is compared with; run it with
//
//	cd bench && go test -run xxx -bench . -benchtime 20x
package bench
