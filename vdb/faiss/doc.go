// Package faiss is a vdb backend over Faiss (https://github.com/facebookresearch/faiss)
// through cgo, for memories that grow past what an exact in-memory scan
// answers quickly.
//
// The binding is compiled only with the build tag faiss:
//
//	go build -tags faiss ./...
//
// and needs Debian's libfaiss-dev and libopenblas-dev (scripts/install-faiss.sh
// installs them). Without the tag, or with CGO_ENABLED=0, the package still
// compiles, and [New] returns an error wrapping [ErrNotBuilt] and
// [vdb.ErrUnsupported] that says to rebuild with -tags faiss, so a program
// can offer the backend and fail clearly where it was not built in.
//
// Importing the package registers the backend "faiss" with [vdb.Open], in
// every build:
//
//	import _ "github.com/agentmem/agentmem/vdb/faiss"
//
//	db, err := vdb.Open(ctx, "faiss:HNSW32,Flat?efSearch=64", vdb.Config{Dim: 384})
//
// The spec's argument is an index-factory string and optional search
// options ([ParseArg]); "faiss" alone is [DefaultFactory].
//
// An [Index] implements [vdb.VectorDatabase] and the optional
// [vdb.Persister] and [vdb.BatchSearcher]. The default index is
// "IDMap,Flat" with inner-product metric on L2-normalised vectors: exact
// cosine search whose scores equal vdb/inmem's. Approximate indexes come from
// a Faiss index-factory string passed to [WithFactory]:
//
//   - "IVF1024,Flat" (about √N lists): k-means lists, searched with
//     [WithNProbe]. Training and adding go through BLAS, so a million
//     vectors build in minutes. Needs training: [Index.Train] on a sample,
//     or a first Add of at least 39 lists' worth of vectors.
//   - "HNSW32,Flat": a graph searched with [WithEfSearch]; fast queries, but
//     Debian's Faiss 1.7.3 builds it slowly (no AVX2 kernels: minutes per
//     100k vectors) and cannot remove from it, so deletes are tombstones
//     (see [Index]).
//
// Which backend: vdb/inmem answers one query at a time faster than Faiss'
// flat scan and needs no C libraries; use it up to a few hundred thousand
// vectors. Use Faiss' flat index for many queries at once
// ([Index.SearchBatch] scores them with one matrix product), and an IVF index
// for millions of vectors where a full scan per query is too slow.
//
// Faiss 1.7.3 as packaged by Debian ships no C API, so the package carries
// its own small extern "C" shim over the C++ API (shim.h, shim.cpp). Every
// shim function catches C++ exceptions and returns the message in the same
// call, so an error can never be read from another thread's state. C memory
// has one owner: the Index owns its Faiss index and frees it in Close (a
// runtime cleanup frees a forgotten one); vectors and result buffers are Go
// memory, lent to C for the duration of one call.
//
// Saved streams ([Index.Export]) wrap Faiss' own serialization in a
// versioned, checksummed header that records the dimension and factory
// string; [Index.Import] checks it before Faiss parses anything.
package faiss

import (
	"errors"
	"regexp"
	"strings"
)

// ErrNotBuilt is returned by [New] in a binary built without the faiss build
// tag (or with CGO_ENABLED=0).
var ErrNotBuilt = errors.New("faiss: backend not built into this binary")

// ErrFactory reports an index-factory string that Faiss does not accept (or
// that does not fit this package: another metric, an id map in the middle),
// or a saved stream written by an index built from another factory string.
var ErrFactory = errors.New("faiss: unusable index factory")

// ErrNotTrained reports an Add to an index that needs training (IVF, PQ…)
// and has not been trained: call [Index.Train] first, or make the first Add
// at least as large as the train size (see [WithTrainSize]).
var ErrNotTrained = errors.New("faiss: index is not trained")

// faissPrefix matches what Faiss puts before its message: the C++ signature
// of the function that threw and the source file and line, then, for a
// failed assertion that carries a message, the asserted C++ expression.
var faissPrefix = regexp.MustCompile(`^Error in .*? at \S+:\d+: (Error: '.*' failed: )?`)

// faissMessage returns Faiss' exception message without the C++ signature,
// source position and asserted expression it starts with ("Error in virtual
// void faiss::IndexIVF::add(…) at /build/…/IndexIVF.cpp:123: Error: 'd % M
// == 0' failed: …"), which mean nothing to a caller of this package.
func faissMessage(s string) string {
	return faissPrefix.ReplaceAllString(strings.TrimSpace(s), "")
}
