// Command ferretdb-sqlite runs FerretDB v1 with its SQLite backend on one TCP address: the
// MongoDB-wire server addrindex's tests use where no mongod can be installed. It embeds
// FerretDB's package because the module's own cmd/ferretdb binary panics at start when built
// outside FerretDB's release tooling (it expects a generated version file).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "", "directory for the SQLite databases (required)")
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
		SQLiteURL: "file:" + *dir + "/",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-sqlite:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// The test helper waits for this line before connecting.
	fmt.Println("ready", f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "ferretdb-sqlite:", err)
		os.Exit(1)
	}
}
