// Command tether-gen-go writes package tether's documents_gen.go from the
// JSON Schemas `tether schema DOC` prints (committed under
// bindings/go/schemas). Run it through `go generate ./...` in bindings/go.
//
//	tether-gen-go [-sync DIR] -schemas DIR -out FILE
//
// -sync first copies every DOC.schema.json of DIR (the repository's
// tests/schema/golden, which `tether schema` must equal byte for byte)
// into -schemas, removing the schemas DIR no longer has.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"tether.dev/bindings/go/internal/gen"
)

func main() {
	schemas := flag.String("schemas", "../schemas", "the directory of DOC.schema.json files")
	out := flag.String("out", "documents_gen.go", "the file to write")
	sync := flag.String("sync", "", "copy the DOC.schema.json files of this directory into -schemas first")
	flag.Parse()
	if err := run(*schemas, *out, *sync); err != nil {
		fmt.Fprintln(os.Stderr, "tether-gen-go:", err)
		os.Exit(1)
	}
}

func run(schemas, out, sync string) error {
	if sync != "" {
		if err := gen.Sync(sync, schemas); err != nil {
			return err
		}
	}
	src, err := gen.Generate(schemas)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Clean(out))
}
