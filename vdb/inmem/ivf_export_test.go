package inmem

// Scanned returns how many rows' codes the IVF's searches have scanned.
func (x *IVF) Scanned() int64 { return x.scanned.Load() }

// TrainNow trains the index from the rows held, whatever their number.
func (x *IVF) TrainNow() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ix = x.train()
}

// HasColumns reports whether the IVF's DB keeps column codes.
func (x *IVF) HasColumns() bool {
	x.db.mu.RLock()
	defer x.db.mu.RUnlock()
	return x.db.cols != nil
}
