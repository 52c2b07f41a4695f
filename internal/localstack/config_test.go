package localstack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var defaults = NodeDefaults{Nodes: 3, CPU: "8", Memory: "32Gi", Pods: "110"}

func TestDefaultMemberTopology(t *testing.T) {
	got := []string{}
	for i := 1; i <= 4; i++ {
		m := DefaultMember(i, defaults)
		got = append(got, m.Name+":"+m.Provider+"/"+m.Region+"/"+m.Zone)
	}
	want := []string{
		"member1:kwok/region-1/zone-1a",
		"member2:kwok/region-1/zone-1b",
		"member3:kwok/region-2/zone-2a",
		"member4:kwok/region-2/zone-2b",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("topology (-want +got):\n%s", diff)
	}
}

func TestConfigFileFillsGapsFromDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stack.yaml")
	if err := os.WriteFile(path, []byte("members:\n- name: east\n  nodes: 5\n  cpu: \"16\"\n  region: us-east\n- name: west\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c.DataDir = "/data"
	c.Complete(defaults)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []MemberConfig{
		{Name: "east", Nodes: 5, CPU: "16", Memory: "32Gi", Pods: "110", Provider: "kwok", Region: "us-east", Zone: "zone-1a"},
		{Name: "west", Nodes: 3, CPU: "8", Memory: "32Gi", Pods: "110", Provider: "kwok", Region: "region-1", Zone: "zone-1b"},
	}
	if diff := cmp.Diff(want, c.Members); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

func TestConfigFileRejectsUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stack.yaml")
	if err := os.WriteFile(path, []byte("members:\n- name: a\n  nodez: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfigFile(path); err == nil || !strings.Contains(err.Error(), "nodez") {
		t.Fatalf("want an error naming the unknown field nodez, got %v", err)
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	cases := map[string]struct {
		mutate func(c *Config)
		want   string
	}{
		"duplicate member names": {func(c *Config) { c.Members[1].Name = "member1" }, "members[1] (member1): name is used twice"},
		"upper-case name":        {func(c *Config) { c.Members[0].Name = "Member1" }, "lowercase DNS label"},
		"reserved name":          {func(c *Config) { c.Members[0].Name = ControlPlaneName }, "reserved"},
		"zero nodes":             {func(c *Config) { c.Members[0].Nodes = -1 }, "nodes must be between 1 and 1000"},
		"bad quantity":           {func(c *Config) { c.Members[0].Memory = "lots" }, `memory "lots" is not a Kubernetes quantity`},
		"no members":             {func(c *Config) { c.Members = nil }, "at least one member"},
		"no data dir":            {func(c *Config) { c.DataDir = "" }, "--data-dir"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &Config{DataDir: "/data", Members: []MemberConfig{DefaultMember(1, defaults), DefaultMember(2, defaults)}}
			tc.mutate(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestConfigFileRejectsZeroNodes(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"zero":      "members:\n- name: a\n  nodes: 0\n",
		"zero-bare": "members:\n- name: a\n  bare: true\n  nodes: 0\n",
	} {
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfigFile(path)
		if name == "zero" && (err == nil || !strings.Contains(err.Error(), "bare: true")) {
			t.Errorf("nodes: 0 must be refused, pointing at bare: true; got %v", err)
		}
		if name == "zero-bare" && err != nil {
			t.Errorf("nodes: 0 on a bare member is fine: %v", err)
		}
	}
}
