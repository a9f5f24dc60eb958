package gen

import (
	"os"
	"path/filepath"
)

// Sync makes dst hold exactly the DOC.schema.json files of src, byte for
// byte: copied in, and those src no longer has removed.
func Sync(src, dst string) error {
	want, err := Documents(src)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, doc := range want {
		data, err := os.ReadFile(filepath.Join(src, doc+SchemaSuffix))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, doc+SchemaSuffix), data, 0o644); err != nil {
			return err
		}
		keep[doc] = true
	}
	have, err := Documents(dst)
	if err != nil {
		return err
	}
	for _, doc := range have {
		if !keep[doc] {
			if err := os.Remove(filepath.Join(dst, doc+SchemaSuffix)); err != nil {
				return err
			}
		}
	}
	return nil
}
