//go:build faiss && cgo

// The build constraint above must stay on the first line and match faiss.go's:
// without it, `go build` refuses the package whenever no cgo file is compiled
// (default build, CGO_ENABLED=0): "C++ source files not allowed when not
// using cgo".

#include "shim.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <omp.h>

#include <faiss/AutoTune.h>
#include <faiss/Index.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IVFlib.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/utils/distances.h>

struct shim_index {
	faiss::Index *index; // owned
	bool ivf;            // index is an IVF (or a transform over one): it stores ids itself
	bool removable;      // remove_ids works
	bool hnsw;           // an id map over an HNSW index
};

struct shim_buf {
	std::vector<uint8_t> data;
};

namespace {

// The OpenMP thread count this process started with (OMP_NUM_THREADS or the
// number of cores), read once on the main thread during static init.
// omp_set_num_threads changes only the calling OS thread's setting, and Go
// runs cgo calls on whatever thread the goroutine is on, so every call that
// may run OpenMP code sets the count it wants, default included.
const int default_threads = omp_get_max_threads();

void set_threads(int32_t n) { omp_set_num_threads(n > 0 ? n : default_threads); }

// set_threads_blas is set_threads for calls whose work is BLAS matrix
// products (exhaustive search of 20+ queries, IVF training and list
// assignment): without a count from the caller they get one OpenMP thread.
// OpenBLAS runs its own thread pool, and libgomp's idle threads spin-wait
// after each parallel region (OMP_WAIT_POLICY); Faiss alternates the two per
// block of 1024 vectors, so on a busy 2-core machine the spinning threads
// starved the matrix products: batched flat search ran 5-10x slower
// (25 vs 313 queries/s at 64 queries per call, N=100k, d=384).
void set_threads_blas(int32_t n) { omp_set_num_threads(n > 0 ? n : 1); }

// dup_msg returns a malloc'd copy of what. The caller (Go) adds what the
// operation was and strips Faiss' "Error in <signature> at <file>:<line>: ".
char *dup_msg(const char *what) {
	std::string s(what ? what : "(no message)");
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (p == nullptr) {
		// Cannot even report the error; returning NULL would mean success.
		std::abort();
	}
	std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

// guard runs fn and turns any C++ exception into a malloc'd message.
template <typename F> char *guard(F fn) {
	try {
		fn();
		return nullptr;
	} catch (const faiss::FaissException &e) {
		return dup_msg(e.msg.c_str());
	} catch (const std::bad_alloc &) {
		return dup_msg("out of memory");
	} catch (const std::exception &e) {
		return dup_msg(e.what());
	} catch (...) {
		return dup_msg("unknown C++ exception");
	}
}

bool starts_with(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

bool is_ivf_shape(faiss::Index *idx) {
	if (dynamic_cast<faiss::IndexIVF *>(idx) != nullptr) {
		return true;
	}
	if (auto pt = dynamic_cast<faiss::IndexPreTransform *>(idx)) {
		return dynamic_cast<faiss::IndexIVF *>(pt->index) != nullptr;
	}
	return false;
}

// probe_removable reports whether remove_ids is implemented, by removing
// nothing.
bool probe_removable(faiss::Index *idx) {
	try {
		faiss::IDSelectorBatch none(0, nullptr);
		idx->remove_ids(none);
		return true;
	} catch (...) {
		return false;
	}
}

// check_shape checks that idx is what shim_new builds: an IVF shape, or an
// IndexIDMap over a non-IVF index, with the inner-product metric.
void check_shape(faiss::Index *idx, int32_t d, bool *ivf) {
	FAISS_THROW_IF_NOT_FMT(idx->d == d, "index has dimension %d, want %d", int(idx->d), int(d));
	FAISS_THROW_IF_NOT_MSG(idx->metric_type == faiss::METRIC_INNER_PRODUCT,
	                       "index does not use the inner-product metric");
	if (is_ivf_shape(idx)) {
		*ivf = true;
		return;
	}
	auto m = dynamic_cast<faiss::IndexIDMap *>(idx);
	FAISS_THROW_IF_NOT_MSG(m != nullptr && m->index != nullptr, "unexpected index type");
	FAISS_THROW_IF_NOT_MSG(dynamic_cast<faiss::IndexIDMap *>(m->index) == nullptr &&
	                           faiss::ivflib::try_extract_index_ivf(m->index) == nullptr,
	                       "unexpected index type (id map over an IVF index or another id map)");
	*ivf = false;
}

// SpanReader reads from caller-owned memory without copying it.
struct SpanReader : faiss::IOReader {
	const uint8_t *p;
	size_t n;
	size_t off = 0;
	SpanReader(const uint8_t *p, size_t n) : p(p), n(n) { name = "buffer"; }
	size_t operator()(void *ptr, size_t size, size_t nitems) override {
		if (size == 0 || off >= n) {
			return 0;
		}
		size_t items = std::min(nitems, (n - off) / size);
		std::memcpy(ptr, p + off, items * size);
		off += items * size;
		return items;
	}
};

} // namespace

extern "C" {

char *shim_new(int32_t d, const char *description, shim_index **out) {
	*out = nullptr;
	return guard([&] {
		FAISS_THROW_IF_NOT_MSG(d > 0, "dimension must be positive");
		std::string desc(description);
		if (starts_with(desc, "IDMap2,")) {
			desc.erase(0, 7);
		} else if (starts_with(desc, "IDMap,")) {
			desc.erase(0, 6);
		}
		FAISS_THROW_IF_NOT_MSG(!desc.empty(), "empty index description");
		std::unique_ptr<faiss::Index> idx(faiss::index_factory(d, desc.c_str(), faiss::METRIC_INNER_PRODUCT));
		FAISS_THROW_IF_NOT_MSG(idx->metric_type == faiss::METRIC_INNER_PRODUCT,
		                       "this index type does not support the inner-product metric");
		FAISS_THROW_IF_NOT_MSG(dynamic_cast<faiss::IndexIDMap *>(idx.get()) == nullptr,
		                       "IDMap may only come first in the description");
		std::unique_ptr<shim_index> ix(new shim_index{nullptr, false, false, false});
		if (is_ivf_shape(idx.get())) {
			ix->ivf = true;
			ix->index = idx.release();
		} else {
			FAISS_THROW_IF_NOT_MSG(faiss::ivflib::try_extract_index_ivf(idx.get()) == nullptr,
			                       "unsupported index layout around an IVF index");
			ix->hnsw = dynamic_cast<faiss::IndexHNSW *>(idx.get()) != nullptr;
			std::unique_ptr<faiss::IndexIDMap> m(new faiss::IndexIDMap(idx.get()));
			m->own_fields = true;
			idx.release();
			ix->index = m.release();
		}
		ix->removable = probe_removable(ix->index);
		*out = ix.release();
	});
}

void shim_free(shim_index *ix) {
	if (ix == nullptr) {
		return;
	}
	delete ix->index;
	delete ix;
}

void shim_stat(const shim_index *ix, shim_info *info) {
	const faiss::Index *idx = ix->index;
	info->d = int32_t(idx->d);
	info->is_trained = idx->is_trained ? 1 : 0;
	info->removable = ix->removable ? 1 : 0;
	info->ivf = ix->ivf ? 1 : 0;
	const faiss::IndexIVF *ivf = faiss::ivflib::try_extract_index_ivf(idx);
	info->nlist = ivf != nullptr ? int64_t(ivf->nlist) : 0;
	info->ntotal = int64_t(idx->ntotal);
}

char *shim_set_param(shim_index *ix, const char *name, double value) {
	return guard([&] {
		faiss::Index *target = ix->index;
		if (auto m = dynamic_cast<faiss::IndexIDMap *>(target)) {
			target = m->index;
		}
		faiss::ParameterSpace ps;
		ps.set_index_parameter(target, name, value);
	});
}

char *shim_train(shim_index *ix, int64_t n, const float *x, int32_t nthreads) {
	return guard([&] {
		if (ix->hnsw) {
			set_threads(nthreads);
		} else {
			set_threads_blas(nthreads);
		}
		ix->index->train(n, x);
	});
}

char *shim_add(shim_index *ix, int64_t n, const float *x, const int64_t *ids, int32_t nthreads) {
	return guard([&] {
		if (ix->ivf) {
			set_threads_blas(nthreads); // assignment to lists is a quantizer search
		} else {
			set_threads(nthreads); // HNSW builds its graph in parallel
		}
		FAISS_THROW_IF_NOT_MSG(ix->index->is_trained, "index is not trained");
		ix->index->add_with_ids(n, x, ids);
	});
}

char *shim_remove(shim_index *ix, int64_t n, const int64_t *ids, int64_t *removed, int32_t nthreads) {
	*removed = 0;
	return guard([&] {
		set_threads(nthreads);
		faiss::IDSelectorBatch sel(n, ids);
		*removed = int64_t(ix->index->remove_ids(sel));
	});
}

char *shim_search(const shim_index *ix, int64_t n, const float *x, int64_t k, float *dist, int64_t *labels,
                  int32_t exhaustive, int32_t nthreads) {
	return guard([&] {
		// A flat scan of many queries (or HNSW's storage scanned exhaustively)
		// is one matrix product; IVF and HNSW searches are OpenMP loops.
		bool exhaustive_flat = !ix->ivf && (!ix->hnsw || exhaustive);
		if (exhaustive_flat && n >= faiss::distance_compute_blas_threshold) {
			set_threads_blas(nthreads);
		} else {
			set_threads(nthreads);
		}
		const faiss::Index *idx = ix->index;
		if (exhaustive && ix->ivf) {
			const faiss::IndexIVF *ivf = faiss::ivflib::try_extract_index_ivf(idx);
			faiss::SearchParametersIVF p;
			p.nprobe = ivf->nlist;
			if (auto pt = dynamic_cast<const faiss::IndexPreTransform *>(idx)) {
				faiss::SearchParametersPreTransform pp;
				pp.index_params = &p;
				pt->search(n, x, k, dist, labels, &pp);
			} else {
				idx->search(n, x, k, dist, labels, &p);
			}
			return;
		}
		if (exhaustive) {
			auto m = dynamic_cast<const faiss::IndexIDMap *>(idx);
			auto h = m != nullptr ? dynamic_cast<const faiss::IndexHNSW *>(m->index) : nullptr;
			if (h != nullptr && h->storage != nullptr) {
				h->storage->search(n, x, k, dist, labels);
				for (int64_t i = 0; i < n * k; i++) {
					labels[i] = labels[i] < 0 ? -1 : m->id_map[labels[i]];
				}
				return;
			}
		}
		idx->search(n, x, k, dist, labels);
	});
}

char *shim_write(const shim_index *ix, shim_buf **out, uint8_t **data, size_t *size) {
	*out = nullptr;
	*data = nullptr;
	*size = 0;
	return guard([&] {
		faiss::VectorIOWriter w;
		faiss::write_index(ix->index, &w);
		std::unique_ptr<shim_buf> b(new shim_buf);
		b->data = std::move(w.data);
		*data = b->data.data();
		*size = b->data.size();
		*out = b.release();
	});
}

char *shim_buf_new(size_t size, shim_buf **out, uint8_t **data) {
	*out = nullptr;
	*data = nullptr;
	return guard([&] {
		std::unique_ptr<shim_buf> b(new shim_buf);
		b->data.resize(size);
		*data = b->data.data();
		*out = b.release();
	});
}

void shim_buf_free(shim_buf *b) { delete b; }

char *shim_read(const shim_buf *b, int32_t d, shim_index **out) {
	*out = nullptr;
	return guard([&] {
		SpanReader r(b->data.data(), b->data.size());
		std::unique_ptr<faiss::Index> idx(faiss::read_index(&r));
		FAISS_THROW_IF_NOT_MSG(r.off == r.n, "trailing bytes after the index");
		bool ivf = false;
		check_shape(idx.get(), d, &ivf);
		std::unique_ptr<shim_index> ix(new shim_index{idx.release(), ivf, false, false});
		if (auto m = dynamic_cast<faiss::IndexIDMap *>(ix->index)) {
			ix->hnsw = dynamic_cast<faiss::IndexHNSW *>(m->index) != nullptr;
		}
		ix->removable = probe_removable(ix->index);
		*out = ix.release();
	});
}

int32_t shim_blas_threshold(int32_t n) {
	int32_t old = faiss::distance_compute_blas_threshold;
	faiss::distance_compute_blas_threshold = n;
	return old;
}

} // extern "C"
