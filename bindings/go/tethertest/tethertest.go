//go:build unix

// Package tethertest is what Go tests of a Tether host need: the tether
// binary (TETHER_BIN), a store holding a real recorded session imported
// by `tether sessions import`, and a `tether serve` over it that is
// stopped when the test ends.
//
// A test that needs the binary skips, saying "SKIP:" and why, when
// TETHER_BIN is not set and cargo's target folder holds no debug build;
// with TETHER_REQUIRE_PEERS=1 (CI, where it is built) it fails instead.
package tethertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tether.dev/bindings/go/tetherproc"
)

// Required says whether a missing peer (the binary, the samples) fails a
// test instead of skipping it: TETHER_REQUIRE_PEERS=1.
func Required() bool { return os.Getenv("TETHER_REQUIRE_PEERS") == "1" }

// Missing skips the test loudly, or fails it when peers are required.
func Missing(t testing.TB, format string, args ...interface{}) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("FAIL: %s (TETHER_REQUIRE_PEERS=1)", msg)
	}
	t.Skipf("SKIP: %s", msg)
}

// Binary is the tether binary TETHER_BIN names; without it, the debug
// build in the target folder cargo names (CARGO_TARGET_DIR may move it
// from target/), where one is built.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("TETHER_BIN")
	if bin == "" {
		target, err := cargoTarget(RepoRoot(t))
		if err != nil {
			Missing(t, "TETHER_BIN is not set, and cargo did not say where it builds (%v); build tether (cargo build -p tether-mcp-cli) and set TETHER_BIN", err)
		}
		bin = filepath.Join(target, "debug", "tether")
		if !isFile(bin) {
			Missing(t, "TETHER_BIN is not set and %s is not built; build tether (cargo build -p tether-mcp-cli), or set TETHER_BIN", bin)
		}
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatalf("TETHER_BIN=%s: %v", bin, err)
	}
	info, err := os.Stat(abs)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("FAIL: TETHER_BIN=%s is not an executable file (%v)", bin, err)
	}
	return abs
}

// cargoTarget is the target folder cargo builds the workspace at root
// into, as `cargo metadata` says it (never guessed: CARGO_TARGET_DIR and
// .cargo/config.toml move it).
func cargoTarget(root string) (string, error) {
	cmd := exec.Command("cargo", "metadata", "--format-version", "1", "--no-deps", "--offline")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	var meta struct {
		TargetDirectory string `json:"target_directory"`
	}
	if err := json.Unmarshal(out, &meta); err != nil {
		return "", err
	}
	if meta.TargetDirectory == "" {
		return "", fmt.Errorf("cargo metadata names no target_directory")
	}
	return meta.TargetDirectory, nil
}

// RepoRoot is the repository's root: TETHER_REPO, else the first directory
// up from here that holds .ci/run and tests/fixtures.
func RepoRoot(t testing.TB) string {
	t.Helper()
	if root := os.Getenv("TETHER_REPO"); root != "" {
		return root
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if isFile(filepath.Join(dir, ".ci", "run")) && isDir(filepath.Join(dir, "tests", "fixtures")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			Missing(t, "not inside the Tether repository (no .ci/run above %s); set TETHER_REPO", dir)
		}
		dir = parent
	}
}

func isFile(p string) bool { i, err := os.Stat(p); return err == nil && i.Mode().IsRegular() }
func isDir(p string) bool  { i, err := os.Stat(p); return err == nil && i.IsDir() }

// RecordedHome copies the recorded home tests/fixtures/records/NAME (a
// harness's real session files) into a private directory and returns it,
// so that a test may change what it holds. skip lists paths under it
// (slash-separated, relative) left out of the copy.
func RecordedHome(t testing.TB, name string, skip ...string) string {
	t.Helper()
	from := filepath.Join(RepoRoot(t), "tests", "fixtures", "records", name)
	home := filepath.Join(t.TempDir(), "home")
	if err := CopyTree(from, home, skip...); err != nil {
		t.Fatalf("copying %s: %v", from, err)
	}
	return home
}

// CopyTree copies the directory from to to, leaving out the paths in skip
// (relative, slash-separated) and everything under them.
func CopyTree(from, to string, skip ...string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		for _, s := range skip {
			if filepath.ToSlash(rel) == s {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// Env is the environment tether runs in for a test: only PATH and HOME
// (and the extra NAME=VALUE pairs), as a new user on a private home.
func Env(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, extra...)
}

// Run runs tether with args in env, bounded by within (its process group
// is stopped past it), and returns its stdout and stderr; a non-zero exit
// fails the test.
func Run(t testing.TB, bin string, env []string, within time.Duration, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("tether %s: %v", strings.Join(args, " "), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("tether %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	case <-timer.C:
		killGroup(cmd.Process.Pid)
		<-done
		t.Fatalf("tether %s did not finish within %s\n%s", strings.Join(args, " "), within, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// Import runs `tether sessions import --db DB` on home's records.
func Import(t testing.TB, bin, home, db string) string {
	t.Helper()
	_, stderr := Run(t, bin, Env(home), 2*time.Minute, "sessions", "import", "--db", db)
	return stderr
}

// StoreWithSession imports the recorded home NAME (see RecordedHome) into
// a new SQLite store and returns the store's path and the home.
func StoreWithSession(t testing.TB, bin, name string, skip ...string) (db, home string) {
	t.Helper()
	home = RecordedHome(t, name, skip...)
	db = filepath.Join(t.TempDir(), "tether.db")
	if out := Import(t, bin, home, db); !strings.Contains(out, "1 new") {
		t.Fatalf("the import of %s made no session: %s", name, out)
	}
	return db, home
}

// Serve starts `tether serve` over db; it is stopped when the test ends.
func Serve(t testing.TB, bin, db string) *tetherproc.Serve {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tetherproc.StartWithin)
	defer cancel()
	serve, err := tetherproc.StartServe(ctx, bin, tetherproc.ServeOptions{DB: db, Env: Env(filepath.Dir(db))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := serve.Stop(10 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return serve
}

// Samples is the directory the Rust tests write the golden samples of
// every document to: TETHER_SAMPLES, else target/tether-samples.
func Samples(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TETHER_SAMPLES")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "target", "tether-samples")
	}
	if !isDir(dir) {
		Missing(t, "no samples in %s; the Rust tests write them (cargo test -p tether-tests), or set TETHER_SAMPLES", dir)
	}
	return dir
}
