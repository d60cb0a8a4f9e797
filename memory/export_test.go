package memory

// Abandon simulates a crash of the process holding s: its files are
// released without a flush, as the kernel would on exit.
func Abandon(s *ShortMemory) {
	s.closeOnce.Do(func() {
		s.m.Close()
		if s.store != nil {
			s.store.unlock()
		}
	})
}
