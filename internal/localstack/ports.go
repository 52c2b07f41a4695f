package localstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
)

// PortAllocator hands out TCP ports on 127.0.0.1 by key, such as
// "member1/apiserver". Keys make the choice repeatable: a restarted stack
// gets the same ports back when they are still free.
type PortAllocator interface {
	// Port returns the port for key, choosing one if the key is new.
	Port(key string) (int, error)
}

// portsFile is where the chosen ports are recorded, relative to the data dir.
const portsFile = "ports.json"

// RecordedPorts is a PortAllocator that reuses the ports recorded in the
// data dir when they are still free on loopback and otherwise asks the kernel
// for a free one. Save writes the result back.
type RecordedPorts struct {
	path     string
	recorded map[string]int
	chosen   map[string]int
	// AsRecorded returns recorded ports without checking that they are
	// free, for showing the plan of a stack that may be running.
	AsRecorded bool
}

// LoadRecordedPorts reads <dataDir>/ports.json if it exists. A missing file is
// not an error; a corrupt one is.
func LoadRecordedPorts(dataDir string) (*RecordedPorts, error) {
	p := &RecordedPorts{path: filepath.Join(dataDir, portsFile), recorded: map[string]int{}, chosen: map[string]int{}}
	data, err := os.ReadFile(p.path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read recorded ports: %w", err)
	}
	if err := json.Unmarshal(data, &p.recorded); err != nil {
		return nil, fmt.Errorf("parse %s: %w (delete it to pick new ports)", p.path, err)
	}
	return p, nil
}

// Port implements PortAllocator.
func (p *RecordedPorts) Port(key string) (int, error) {
	if port, ok := p.chosen[key]; ok {
		return port, nil
	}
	if port, ok := p.recorded[key]; ok && (p.AsRecorded || portFree(port)) && !p.taken(port) {
		p.chosen[key] = port
		return port, nil
	}
	for range 100 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if !p.taken(port) {
			p.chosen[key] = port
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port found for %s", key)
}

func (p *RecordedPorts) taken(port int) bool {
	for _, v := range p.chosen {
		if v == port {
			return true
		}
	}
	return false
}

// Save writes the chosen ports to the data dir.
func (p *RecordedPorts) Save() error {
	data, err := json.MarshalIndent(p.chosen, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p.path, append(data, '\n'), 0o600)
}

// AllRecorded reports whether every chosen port came from the record.
func (p *RecordedPorts) AllRecorded() bool {
	for k, v := range p.chosen {
		if p.recorded[k] != v {
			return false
		}
	}
	return true
}

// Keys returns the chosen keys, sorted.
func (p *RecordedPorts) Keys() []string {
	keys := make([]string, 0, len(p.chosen))
	for k := range p.chosen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SequentialPorts is a deterministic PortAllocator for plans and tests: it
// hands out Next, Next+1, ... in the order keys are first asked for.
type SequentialPorts struct {
	Next   int
	chosen map[string]int
}

// Port implements PortAllocator.
func (s *SequentialPorts) Port(key string) (int, error) {
	if s.chosen == nil {
		s.chosen = map[string]int{}
	}
	if p, ok := s.chosen[key]; ok {
		return p, nil
	}
	p := s.Next
	s.Next++
	s.chosen[key] = p
	return p, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}
