package inmem

// Scanned returns how many rows' codes the IVF's searches have scanned.
func (x *IVF) Scanned() int64 { return x.scanned.Load() }
