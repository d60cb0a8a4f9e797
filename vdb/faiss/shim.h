// shim.h: a small extern "C" layer over the Faiss 1.7.3 C++ API, for cgo.
//
// Debian's libfaiss-dev ships no C API, so package faiss carries this one.
// Rules every function follows:
//   - It never lets a C++ exception escape: each returns NULL on success or a
//     malloc'd, NUL-terminated error message that the caller must free(). The
//     message is returned by the same call that failed, so nothing is read
//     from thread-local state (Faiss' own C API keeps its last error per
//     thread, and a goroutine may change threads between two cgo calls).
//   - Pointers to caller memory (vectors, ids, output buffers) are used only
//     for the duration of the call and never retained.
//   - Objects returned through an out-parameter (shim_index, shim_buf) have
//     exactly one owner, the caller, who frees them with shim_free /
//     shim_buf_free.
#ifndef AGENTMEM_FAISS_SHIM_H
#define AGENTMEM_FAISS_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// An index: a faiss::Index whose labels are caller-chosen int64 ids (an
// IndexIDMap around the factory's index, or an IVF index that stores ids
// itself).
typedef struct shim_index shim_index;

// A byte buffer owned by C++ (a serialized index).
typedef struct shim_buf shim_buf;

// Facts about an index.
typedef struct {
	int32_t d;
	int32_t is_trained;  // 0: train before add
	int32_t removable;   // 0: remove_ids is not implemented (HNSW)
	int32_t ivf;         // 1: an IVF index (ids stored in its lists)
	int64_t nlist;       // IVF: number of inverted lists; else 0
	int64_t ntotal;      // vectors stored (for an index that cannot
	                     // remove, including replaced ones)
} shim_info;

// shim_new builds an index from a Faiss index-factory description with the
// inner-product metric. A leading "IDMap," or "IDMap2," is accepted and
// ignored: the shim chooses the id mapping itself.
char *shim_new(int32_t d, const char *description, shim_index **out);

// shim_free frees ix (NULL is a no-op).
void shim_free(shim_index *ix);

// shim_stat fills info. It only reads fields and cannot fail.
void shim_stat(const shim_index *ix, shim_info *info);

// shim_set_param sets a Faiss search parameter ("nprobe", "efSearch") on the
// index, through faiss::ParameterSpace.
char *shim_set_param(shim_index *ix, const char *name, double value);

// shim_train trains the index on n vectors x (n*d floats).
char *shim_train(shim_index *ix, int64_t n, const float *x, int32_t nthreads);

// shim_add adds n vectors x (n*d floats) under ids (n labels).
char *shim_add(shim_index *ix, int64_t n, const float *x, const int64_t *ids, int32_t nthreads);

// shim_remove removes the n ids and stores how many vectors were removed.
char *shim_remove(shim_index *ix, int64_t n, const int64_t *ids, int64_t *removed, int32_t nthreads);

// shim_search searches n queries x (n*d floats) for k neighbours each,
// filling dist and labels (n*k each; empty slots get label -1). With
// exhaustive != 0 an approximate index compares the queries with every stored
// vector: an IVF index probes all its lists, an HNSW index scans its storage.
char *shim_search(const shim_index *ix, int64_t n, const float *x, int64_t k,
                  float *dist, int64_t *labels, int32_t exhaustive, int32_t nthreads);

// shim_write serializes ix with faiss::write_index into a new buffer; data
// and size describe its bytes, valid until shim_buf_free(*out).
char *shim_write(const shim_index *ix, shim_buf **out, uint8_t **data, size_t *size);

// shim_buf_new makes a zeroed buffer of size bytes for the caller to fill
// before shim_read.
char *shim_buf_new(size_t size, shim_buf **out, uint8_t **data);

// shim_buf_free frees b (NULL is a no-op).
void shim_buf_free(shim_buf *b);

// shim_read deserializes an index written by shim_write from b (which the
// caller still owns and frees) and checks that it has dimension d, the
// inner-product metric and the shape shim_new gives.
char *shim_read(const shim_buf *b, int32_t d, shim_index **out);

// shim_blas_threshold sets faiss::distance_compute_blas_threshold (process
// wide): from how many queries at once an exhaustive search uses BLAS, and
// returns the previous value. Call it before any search runs.
int32_t shim_blas_threshold(int32_t n);

#ifdef __cplusplus
}
#endif

#endif
