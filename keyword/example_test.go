package keyword_test

import (
	"fmt"

	"github.com/agentmem/agentmem/keyword"
)

func ExampleNewTokenizer() {
	tok, err := keyword.NewTokenizer() // Chinese as bigrams, the default
	if err != nil {
		panic(err)
	}
	for _, s := range []string{
		"ERR_CONN_RESET",
		"LH 401",
		"138-0013-8000",
		"user@example.com",
		"数据库迁移",
		"!?",
	} {
		fmt.Printf("%s %q\n", s, tok.Tokens(s))
	}
	// Output:
	// ERR_CONN_RESET ["err_conn_reset" "err" "conn" "reset"]
	// LH 401 ["lh" "401" "lh401"]
	// 138-0013-8000 ["138-0013-8000" "138" "0013" "8000" "13800138000"]
	// user@example.com ["user@example.com" "example.com" "user" "exampl" "com"]
	// 数据库迁移 ["数" "据" "数据" "库" "据库" "迁" "库迁" "移" "迁移"]
	// !? []
}
