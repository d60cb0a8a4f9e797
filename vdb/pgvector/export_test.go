package pgvector

// SetExtension makes New look for (and try to create) another extension, so
// that a test can meet a server without it. It returns the previous name.
func SetExtension(name string) string {
	old := extension
	extension = name
	return old
}

// SearchSQL is the query Search sends for k results.
func (db *DB) SearchSQL(k int) string {
	s, _ := db.searchSQL(k, false)
	return s
}
