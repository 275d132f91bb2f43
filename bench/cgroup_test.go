package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// fakeCgroups writes files (path → content) under a new root; a path ending in / is a directory.
func fakeCgroups(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for p, data := range files {
		full := filepath.Join(root, p)
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPlanCgroup(t *testing.T) {
	v1 := map[string]string{"cpu/cgroup.procs": "", "cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}
	v2 := map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "cpu memory", "cgroup.procs": ""}
	v2off := map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "memory", "cgroup.procs": ""}
	for _, tc := range []struct {
		name  string
		files map[string]string
		cpus  float64
		// want: paths relative to the root
		wantDir    string
		wantWrites []fileWrite
		wantErr    bool
	}{
		{"cgroup v1: the cpu controller's quota", v1, 0.35, "cpu/g", []fileWrite{
			{"cpu/g/cpu.cfs_period_us", "100000"}, {"cpu/g/cpu.cfs_quota_us", "35000"}, {"cpu/g/cgroup.procs", "4242"}}, false},
		{"cgroup v1 wins when both are mounted (hybrid)", merge(v1, v2), 1, "cpu/g", []fileWrite{
			{"cpu/g/cpu.cfs_period_us", "100000"}, {"cpu/g/cpu.cfs_quota_us", "100000"}, {"cpu/g/cgroup.procs", "4242"}}, false},
		{"cgroup v2: cpu.max", v2, 0.5, "g", []fileWrite{
			{"g/cpu.max", "50000 100000"}, {"g/cgroup.procs", "4242"}}, false},
		{"cgroup v2 without cpu for the children yet: enabled first", v2off, 0.5, "g", []fileWrite{
			{"cgroup.subtree_control", "+cpu"}, {"g/cpu.max", "50000 100000"}, {"g/cgroup.procs", "4242"}}, false},
		{"a quota is rounded, not truncated", v2, 0.29, "g", []fileWrite{
			{"g/cpu.max", "29000 100000"}, {"g/cgroup.procs", "4242"}}, false},
		{"cgroup v2 without the cpu controller", map[string]string{"cgroup.controllers": "memory pids"}, 0.5, "", nil, true},
		{"no control groups", map[string]string{"other/": ""}, 0.5, "", nil, true},
		{"a cap of no CPU", v1, 0, "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeCgroups(t, tc.files)
			plan, err := planCgroup(root, "g", 4242, tc.cpus)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			var writes []fileWrite
			for _, w := range plan.Writes {
				rel, _ := filepath.Rel(root, w.Path)
				writes = append(writes, fileWrite{rel, w.Data})
			}
			if dir, _ := filepath.Rel(root, plan.Dir); dir != tc.wantDir || !reflect.DeepEqual(writes, tc.wantWrites) {
				t.Errorf("got %s %v\nwant %s %v", dir, writes, tc.wantDir, tc.wantWrites)
			}
		})
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
