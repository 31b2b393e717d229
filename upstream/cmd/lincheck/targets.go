package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// target is a system under test: API servers the clients reach, and the faults it can suffer.
type target interface {
	Name() string
	Start() error
	Endpoints() []endpoint
	// Fault kills one part (SIGKILL) and starts it again; returns what it did. The parts may still
	// be starting when it returns: WaitHealthy waits for them.
	Fault(rng *rand.Rand) (string, error)
	WaitHealthy(timeout time.Duration) error
	Stop()
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type process struct {
	name string
	args []string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

func (p *process) start() error {
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", p.name, err)
	}
	done := make(chan struct{})
	p.done = done
	go func() { _ = p.cmd.Wait(); f.Close(); close(done) }()
	return nil
}

func (p *process) signal(sig syscall.Signal, wait time.Duration) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(wait):
	}
}

func (p *process) kill() { p.signal(syscall.SIGKILL, 5*time.Second) }

func (p *process) stop() {
	p.signal(syscall.SIGTERM, 10*time.Second)
	p.kill()
}

func livez(url string) bool {
	c := &http.Client{Timeout: time.Second}
	r, err := c.Get(url + "/livez")
	if err != nil {
		return false
	}
	r.Body.Close()
	return r.StatusCode == 200
}

func waitAll(timeout time.Duration, eps []endpoint, ok func(endpoint) bool) error {
	deadline := time.Now().Add(timeout)
	for _, ep := range eps {
		for !ok(ep) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not healthy after %v", ep.URL, timeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// serveSQLite: one `arbiter serve` on SQLite, killed and started again on its data directory.
type serveSQLite struct {
	arbiter, dir string
	port         int
	p            *process
}

func (t *serveSQLite) Name() string { return "serve (SQLite)" }

func (t *serveSQLite) Start() error {
	t.port = freePort()
	t.p = &process{name: "arbiter serve", log: filepath.Join(t.dir, "serve.log"),
		args: []string{t.arbiter, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", t.port), "--data-dir", filepath.Join(t.dir, "data"),
			"--no-scheduler", "--no-simulate-nodes", "--no-controllers"}}
	if err := t.p.start(); err != nil {
		return err
	}
	return t.WaitHealthy(30 * time.Second)
}

func (t *serveSQLite) Endpoints() []endpoint {
	return []endpoint{{URL: fmt.Sprintf("http://127.0.0.1:%d", t.port)}}
}

func (t *serveSQLite) Fault(rng *rand.Rand) (string, error) {
	t.p.kill()
	return "SIGKILL serve, start it again", t.p.start()
}

func (t *serveSQLite) WaitHealthy(timeout time.Duration) error {
	return waitAll(timeout, t.Endpoints(), func(ep endpoint) bool { return livez(ep.URL) })
}

func (t *serveSQLite) Stop() { t.p.stop() }

// serveEtcd: a 3-member etcd cluster and two `arbiter serve` replicas on it; a fault kills one etcd
// member or one replica.
type serveEtcd struct {
	arbiter, etcd, dir string
	members, replicas  []*process
	clientURLs         []string
	ports              []int
}

func (t *serveEtcd) Name() string { return "serve (etcd, 3 members, 2 replicas)" }

func (t *serveEtcd) Start() error {
	const n = 3
	var peers []string
	peerPorts := make([]int, n)
	t.clientURLs = make([]string, n)
	for i := 0; i < n; i++ {
		peerPorts[i] = freePort()
		t.clientURLs[i] = fmt.Sprintf("http://127.0.0.1:%d", freePort())
		peers = append(peers, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, peerPorts[i]))
	}
	for i := 0; i < n; i++ {
		peer := fmt.Sprintf("http://127.0.0.1:%d", peerPorts[i])
		p := &process{name: fmt.Sprintf("etcd m%d", i), log: filepath.Join(t.dir, fmt.Sprintf("etcd-%d.log", i)),
			args: []string{t.etcd, "--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(t.dir, fmt.Sprintf("etcd-%d", i)),
				"--listen-client-urls", t.clientURLs[i], "--advertise-client-urls", t.clientURLs[i],
				"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
				"--initial-cluster", strings.Join(peers, ","), "--initial-cluster-state", "new", "--log-level", "warn"}}
		if err := p.start(); err != nil {
			return err
		}
		t.members = append(t.members, p)
	}
	// serve refuses to start on an etcd that does not answer.
	if err := t.etcdHealthy(60 * time.Second); err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		port := freePort()
		t.ports = append(t.ports, port)
		name := fmt.Sprintf("replica-%d", i)
		p := &process{name: name, log: filepath.Join(t.dir, name+".log"),
			args: []string{t.arbiter, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--store", "etcd",
				"--etcd-servers", strings.Join(t.clientURLs, ","), "--etcd-prefix", "/lincheck", "--identity", name,
				"--data-dir", filepath.Join(t.dir, name), "--no-scheduler", "--no-simulate-nodes", "--no-controllers"}}
		if err := p.start(); err != nil {
			return err
		}
		t.replicas = append(t.replicas, p)
	}
	return t.WaitHealthy(60 * time.Second)
}

func (t *serveEtcd) Endpoints() []endpoint {
	var eps []endpoint
	for _, p := range t.ports {
		eps = append(eps, endpoint{URL: fmt.Sprintf("http://127.0.0.1:%d", p)})
	}
	return eps
}

func (t *serveEtcd) Fault(rng *rand.Rand) (string, error) {
	if rng.Intn(2) == 0 {
		p := t.members[rng.Intn(len(t.members))]
		p.kill()
		return "SIGKILL " + p.name + ", start it again", p.start()
	}
	p := t.replicas[rng.Intn(len(t.replicas))]
	p.kill()
	return "SIGKILL serve " + p.name + ", start it again", p.start()
}

func (t *serveEtcd) WaitHealthy(timeout time.Duration) error {
	if err := waitAll(timeout, t.Endpoints(), func(ep endpoint) bool { return livez(ep.URL) }); err != nil {
		return err
	}
	return t.etcdHealthy(timeout)
}

// etcdHealthy waits for every member to report itself healthy (a leader elected, its store open).
func (t *serveEtcd) etcdHealthy(timeout time.Duration) error {
	var eps []endpoint
	for _, u := range t.clientURLs {
		eps = append(eps, endpoint{URL: u})
	}
	return waitAll(timeout, eps, func(ep endpoint) bool {
		c := &http.Client{Timeout: time.Second}
		r, err := c.Get(ep.URL + "/health")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == 200
	})
}

func (t *serveEtcd) Stop() {
	for _, p := range t.replicas {
		p.stop()
	}
	for _, p := range t.members {
		p.stop()
	}
}

// upstreamCluster: the real kube-apiserver of scripts/upstream-cluster.sh, the baseline; a fault
// kills kube-apiserver or etcd and starts it again.
type upstreamCluster struct {
	script, arbiter, dir string
	ep                   endpoint
}

func (t *upstreamCluster) Name() string { return "kube-apiserver v1.37.2 (etcd)" }

func (t *upstreamCluster) run(args ...string) error {
	cmd := exec.Command(t.script, append(args, "--dir", t.dir)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("upstream-cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (t *upstreamCluster) Start() error {
	if err := t.run("up", "--arbiter", t.arbiter); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(t.dir, "cluster.env"))
	if err != nil {
		return err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	port, err := strconv.Atoi(env["API_PORT"])
	if err != nil {
		return fmt.Errorf("cluster.env: API_PORT: %v", err)
	}
	t.ep = endpoint{URL: fmt.Sprintf("https://127.0.0.1:%d", port), Token: env["ADMIN_TOKEN"], CA: filepath.Join(t.dir, "pki", "ca.crt")}
	return nil
}

func (t *upstreamCluster) Endpoints() []endpoint { return []endpoint{t.ep} }

func (t *upstreamCluster) Fault(rng *rand.Rand) (string, error) {
	part := "kube-apiserver"
	if rng.Intn(2) == 0 {
		part = "etcd"
	}
	// The script waits for the part to be ready again.
	return "SIGKILL " + part + ", start it again", t.run("restart", part, "--kill")
}

func (t *upstreamCluster) WaitHealthy(timeout time.Duration) error {
	c, err := newClient(t.ep, "default", time.Second)
	if err != nil {
		return err
	}
	return waitAll(timeout, t.Endpoints(), func(ep endpoint) bool {
		code, _, err := c.do("GET", "/readyz", nil)
		return err == nil && code == 200
	})
}

func (t *upstreamCluster) Stop() { _ = t.run("down") }
