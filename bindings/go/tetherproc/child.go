//go:build unix

// Package tetherproc runs Tether's own processes for a Go host:
// `tether serve` and `tether collect` as children on loopback, each in a
// process group of its own, read through their one JSON line at start,
// and stopped whole.
//
// Stopping escalates within bounded waits that end the moment the child
// exits: SIGINT first (Ctrl-C: what tether handles as its clean stop, so
// `collect` writes what it holds), then SIGTERM, then SIGKILL, each sent
// to the child's process group while the child is still unreaped (so the
// group id cannot have been reused).
package tetherproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Child is a process started in its own process group.
type Child struct {
	name   string
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	stderr *tail
	lines  chan []byte
}

// Start starts cmd in a new process group. Its stdout is read line by line
// (Line returns the first); its stderr is kept, its last 8 KiB, for
// errors (and copied to cmd.Stderr when one was set).
func Start(name string, cmd *exec.Cmd) (*Child, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	c := &Child{name: name, cmd: cmd, done: make(chan struct{}), stderr: &tail{max: 8 << 10}, lines: make(chan []byte, 1)}
	if cmd.Stderr != nil {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, c.stderr)
	} else {
		cmd.Stderr = c.stderr
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		r := bufio.NewReaderSize(stdout, 64<<10)
		first, err := r.ReadBytes('\n')
		if err == nil {
			c.lines <- bytes.TrimSpace(first)
		}
		close(c.lines)
		// The rest is drained, so the child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() {
		// Wait only after stdout is drained: os/exec closes the pipe in Wait.
		<-reading
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Name is what the child was started as (serve, collect).
func (c *Child) Name() string { return c.name }

// Pid is the child's process id (and its process group's).
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done is closed when the child has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Err is how the child exited (valid once Done is closed).
func (c *Child) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return errors.New("still running")
	}
}

// Stderr is the last 8 KiB the child wrote to stderr.
func (c *Child) Stderr() string { return c.stderr.String() }

// Line waits for the child's first line of stdout: until it comes, the
// child exits, ctx ends or within passes, whichever is first.
func (c *Child) Line(ctx context.Context, within time.Duration) ([]byte, error) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case line, ok := <-c.lines:
		if ok {
			return line, nil
		}
		<-c.done
		return nil, fmt.Errorf("%s exited before its first line (%v): %s", c.name, c.err, c.Stderr())
	case <-c.done:
		return nil, fmt.Errorf("%s exited before its first line (%v): %s", c.name, c.err, c.Stderr())
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("%s printed nothing within %s: %s", c.name, within, c.Stderr())
	}
}

// Stopped says how a child was stopped: the last signal it needed, and
// how it exited.
type Stopped struct {
	Signal syscall.Signal // 0 when it had exited by itself
	Err    error          // its exit (nil: status 0)
}

func (s Stopped) String() string {
	how := "by itself"
	if s.Signal != 0 {
		how = "on " + signalName(s.Signal)
	}
	if s.Err == nil {
		return "exited 0 " + how
	}
	return fmt.Sprintf("exited (%v) %s", s.Err, how)
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return s.String()
}

// Stop ends the child and its process group: SIGINT, then SIGTERM, then
// SIGKILL, waiting at most grace after each of the first two and returning
// as soon as the child exits. It errs only when even SIGKILL did not end
// it within grace.
func (c *Child) Stop(grace time.Duration) (Stopped, error) {
	select {
	case <-c.done:
		return Stopped{Err: c.err}, nil
	default:
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		// The child is not reaped before done closes, so its group id is
		// still its own.
		select {
		case <-c.done:
		default:
			_ = syscall.Kill(-c.cmd.Process.Pid, sig)
		}
		timer := time.NewTimer(grace)
		select {
		case <-c.done:
			timer.Stop()
			return Stopped{Signal: sig, Err: c.err}, nil
		case <-timer.C:
		}
	}
	return Stopped{Signal: syscall.SIGKILL}, fmt.Errorf("%s (pid %d) did not exit even on SIGKILL within %s", c.name, c.Pid(), grace)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}
