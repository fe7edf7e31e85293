package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver FerretDB registers too; imported for our own connections
)

// FerretDB v1.24's SQLite backend stores each document as JSON in one column and creates the
// unique `_id` index on the expression `_ferretdb_sjson->"_id"`, while every `_id` lookup,
// update and delete it sends filters on `_ferretdb_sjson->'$._id'`. SQLite matches index
// expressions by their text, so it never uses that index: each lookup scans the table.
//
// An idIndexer watches the databases FerretDB creates under its directory and adds, to every
// collection table, a plain (non-unique) index on exactly the expression the queries use. It
// changes no data and no result: SQLite keeps the index in the same transactions as the table
// and picks it only as an access path; uniqueness stays FerretDB's own index's job. Tables are
// created lazily (on a collection's first write), hence the polling; a table lives unindexed
// for at most one period, which costs time, never correctness.
type idIndexer struct {
	dir string
	dbs map[string]*watchedDB
	// the last error reported, so a lasting one is logged once, not every period
	lastErr string
}

type watchedDB struct {
	db *sql.DB
	// identity and change stamps of the file and its write-ahead log
	info    os.FileInfo
	stamp   string
	version int64
}

func newIDIndexer(dir string) *idIndexer {
	return &idIndexer{dir: dir, dbs: map[string]*watchedDB{}}
}

func (w *idIndexer) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.pass(ctx); err != nil && ctx.Err() == nil && err.Error() != w.lastErr {
				w.lastErr = err.Error()
				fmt.Fprintln(os.Stderr, "ferretdb-sqlite: _id index:", err)
			}
		}
	}
}

// pass looks at every database file once: new ones are opened, changed ones checked for new
// tables, vanished ones (a dropped database) closed.
func (w *idIndexer) pass(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(w.dir, "*.sqlite"))
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var firstErr error
	for _, f := range files {
		seen[f] = true
		if err := w.check(ctx, f); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for f, d := range w.dbs {
		if !seen[f] {
			d.db.Close()
			delete(w.dbs, f)
		}
	}
	return firstErr
}

func (w *idIndexer) check(ctx context.Context, file string) error {
	info, err := os.Stat(file)
	if err != nil {
		return nil // dropped meanwhile
	}
	d := w.dbs[file]
	if d != nil && !os.SameFile(d.info, info) {
		// dropped and created again under the same name
		d.db.Close()
		delete(w.dbs, file)
		d = nil
	}
	stamp := fmt.Sprintf("%d/%d", info.Size(), info.ModTime().UnixNano())
	if wal, err := os.Stat(file + "-wal"); err == nil {
		stamp += fmt.Sprintf("/%d/%d", wal.Size(), wal.ModTime().UnixNano())
	}
	if d != nil && d.stamp == stamp {
		return nil
	}
	if d == nil {
		// busy_timeout as FerretDB's own connections have: a CREATE INDEX waits for its writes
		db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		d = &watchedDB{db: db, info: info, version: -1}
		w.dbs[file] = d
	}
	d.stamp = stamp
	var version int64
	if err := d.db.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&version); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if version == d.version {
		return nil
	}
	if err := indexTables(ctx, d.db); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	// our own CREATE INDEX moved the version too: read it after
	if err := d.db.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&d.version); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// indexTables adds the lookup index to every table holding FerretDB documents that lacks it.
func indexTables(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT m.name FROM sqlite_master m WHERE m.type = 'table'
		AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = '_ferretdb_sjson')
		AND NOT EXISTS (SELECT 1 FROM sqlite_master i WHERE i.type = 'index' AND i.name = m.name || '_addrindex_id_lookup')`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		// the expression must be written exactly as FerretDB's queries write it (metadata.IDColumn)
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (_ferretdb_sjson->'$._id')`, quoteIdent(t+"_addrindex_id_lookup"), quoteIdent(t))
		if _, err := db.ExecContext(ctx, q); err != nil {
			// a table dropped between the listing and here is no error
			if strings.Contains(err.Error(), "no such table") {
				continue
			}
			return err
		}
	}
	return nil
}

func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func (w *idIndexer) close() {
	for f, d := range w.dbs {
		d.db.Close()
		delete(w.dbs, f)
	}
}
