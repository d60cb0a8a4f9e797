package postgres

// MigrationSQL returns migration i's SQL (0: the first) for dimension dim.
func MigrationSQL(i, dim int) string { return migrations[i].sql(dim) }
