package inmem_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/agentmem/agentmem/vdb"
	"github.com/agentmem/agentmem/vdb/inmem"
)

func ExampleDB_Search() {
	ctx := context.Background()
	db, err := inmem.New(3)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// Vectors need not be unit length: they are normalised on the way in.
	err = db.Add(ctx, []int64{1, 2, 3}, [][]float32{
		{1, 0, 0},
		{0, 2, 0},
		{1, 1, 0},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := db.Search(ctx, []float32{3, 0.5, 0}, 2)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Printf("id %d score %.3f\n", r.ID, r.Score)
	}
	// Output:
	// id 1 score 0.986
	// id 3 score 0.814
}

func ExampleDB_SearchMinScore() {
	ctx := context.Background()
	db, _ := inmem.New(2)
	defer db.Close()
	_ = db.Add(ctx, []int64{10, 20, 30}, [][]float32{{1, 0}, {1, 1}, {0, 1}})

	// Through the vdb helper, which uses the backend's in-scan cut-off.
	res, _ := vdb.SearchMinScore(ctx, db, []float32{1, 0}, 5, 0.5)
	fmt.Println(res)
	// Output:
	// [{10 1} {20 0.70710677}]
}

func ExampleDB_Export() {
	ctx := context.Background()
	db, _ := inmem.New(2)
	_ = db.Add(ctx, []int64{7}, [][]float32{{3, 4}})

	var buf bytes.Buffer
	if err := db.Export(ctx, &buf); err != nil {
		log.Fatal(err)
	}
	restored, _ := inmem.New(2)
	if err := restored.Import(ctx, &buf); err != nil {
		log.Fatal(err)
	}
	res, _ := restored.Search(ctx, []float32{3, 4}, 1)
	fmt.Println(restored.Len(), res)
	// Output:
	// 1 [{7 1}]
}

func ExampleWithCodes() {
	ctx := context.Background()
	// Int8 codes beside the float32 rows: searches scan a quarter of the
	// bytes and rescore in float32 only the rows that could make the top k,
	// so the results are exactly those of the plain scan.
	db, err := inmem.New(4, inmem.WithCodes(inmem.Int8))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	_ = db.Add(ctx, []int64{1, 2, 3}, [][]float32{
		{1, 0, 0, 0},
		{0.9, 0.1, 0, 0},
		{0, 0, 1, 0},
	})
	res, _ := db.Search(ctx, []float32{1, 0.05, 0, 0}, 2)
	for _, r := range res {
		fmt.Printf("id %d score %.4f\n", r.ID, r.Score)
	}
	// Output:
	// id 1 score 0.9988
	// id 2 score 0.9982
}
