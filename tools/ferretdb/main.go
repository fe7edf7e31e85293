// Command ferretdb-sqlite runs FerretDB v1 with its SQLite backend on one TCP address: the
// MongoDB-wire server addrindex's tests use where no mongod can be installed. It embeds
// FerretDB's package because the module's own cmd/ferretdb binary panics at start when built
// outside FerretDB's release tooling (it expects a generated version file).
//
// It also gives every collection table an index FerretDB's queries can use (see idindex.go):
// FerretDB v1.24 indexes `_id` by one SQL expression and looks it up by another, so without it
// every `_id` lookup reads the whole table.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "", "directory for the SQLite databases (required)")
	synchronous := flag.String("synchronous", "normal",
		"SQLite synchronous pragma: normal (no fsync per commit; a killed server loses nothing, a power cut "+
			"may lose the last commits) or full (FerretDB's default, an fsync per commit)")
	every := flag.Duration("id-index-every", 50*time.Millisecond,
		"how often new collection tables are looked for and given the _id lookup index (0: never)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb-sqlite: -dir is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-sqlite:", err)
		os.Exit(1)
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/?_pragma=" + url.QueryEscape("synchronous("+*synchronous+")"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-sqlite:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if *every > 0 {
		w := newIDIndexer(*dir)
		defer w.close()
		go w.run(ctx, *every)
	}

	// The test helper waits for this line before connecting.
	fmt.Println("ready", f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "ferretdb-sqlite:", err)
		os.Exit(1)
	}
}
