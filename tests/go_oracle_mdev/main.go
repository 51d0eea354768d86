// The two vGPU naming rules of NVIDIA's KubeVirt GPU device plugin, stated
// with Go's own strings and regexp packages, for tests/naming/test_go_oracle_mdev.py.
// stdin: a JSON list of mdev_type/name contents; stdout: for each, a pair
// [second-field (null when indexing field 1 panics), whitespace-runs].
package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
)

func second(name string) (out *string) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	str := strings.Trim(name, "\n")
	fields := strings.Split(str, " ")
	v := fields[1]
	return &v
}

func main() {
	var in []string
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	re := regexp.MustCompile(`\s+`)
	out := [][2]interface{}{}
	for _, s := range in {
		var a interface{}
		if p := second(s); p != nil {
			a = *p
		}
		out = append(out, [2]interface{}{a, re.ReplaceAllString(strings.Trim(s, "\n"), "_")})
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
