package localstack

import (
	"fmt"
	"net"
	"testing"
)

func TestRecordedPortsAreReusedWhenFree(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadRecordedPorts(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := first.Port("member1/kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := first.Port("member1/etcd-client")
	if a == b {
		t.Fatalf("two keys got the same port %d", a)
	}
	if again, _ := first.Port("member1/kube-apiserver"); again != a {
		t.Fatalf("same key gave %d then %d", a, again)
	}
	if err := first.Save(); err != nil {
		t.Fatal(err)
	}
	second, err := LoadRecordedPorts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := second.Port("member1/kube-apiserver"); got != a {
		t.Errorf("after restart got port %d, want the recorded %d", got, a)
	}
}

func TestRecordedPortIsReplacedWhenTaken(t *testing.T) {
	dir := t.TempDir()
	first, _ := LoadRecordedPorts(dir)
	a, _ := first.Port("x")
	_ = first.Save()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", a))
	if err != nil {
		t.Skipf("cannot occupy port %d: %v", a, err)
	}
	defer l.Close()
	second, _ := LoadRecordedPorts(dir)
	got, err := second.Port("x")
	if err != nil {
		t.Fatal(err)
	}
	if got == a {
		t.Errorf("got the occupied port %d again", a)
	}
}

func TestSequentialPortsAreStablePerKey(t *testing.T) {
	s := &SequentialPorts{Next: 100}
	a, _ := s.Port("a")
	b, _ := s.Port("b")
	a2, _ := s.Port("a")
	if a != 100 || b != 101 || a2 != 100 {
		t.Errorf("got a=%d b=%d a again=%d, want 100 101 100", a, b, a2)
	}
}
