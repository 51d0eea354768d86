// How Go programs read a YAML document: go-yaml v2 (gopkg.in/yaml.v2, which
// sigs.k8s.io/yaml forks: kubectl, Helm, client-go) and go-yaml v3
// (gopkg.in/yaml.v3: kustomize), each unmarshalling into interface{}, for
// tests/base/test_yaml_out.py. Built offline from Debian's golang-gopkg-yaml.v2-dev
// and golang-gopkg-yaml.v3-dev (GOPATH mode).
// stdin: one YAML document; stdout: {"v2": VALUE, "v3": VALUE}, where VALUE is
// the document with every string as a JSON string, every other scalar as
// {"type": Go type, "value": fmt.Sprint of it}, sequences as lists, mappings
// as {"map": [[key, value], ...]}; or {"error": message}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	yaml2 "gopkg.in/yaml.v2"
	yaml3 "gopkg.in/yaml.v3"
)

func annotate(v interface{}) interface{} {
	switch x := v.(type) {
	case string:
		return x
	case []interface{}:
		out := []interface{}{}
		for _, item := range x {
			out = append(out, annotate(item))
		}
		return out
	case map[interface{}]interface{}:
		pairs := [][2]interface{}{}
		for k, item := range x {
			pairs = append(pairs, [2]interface{}{annotate(k), annotate(item)})
		}
		return map[string]interface{}{"map": pairs}
	case map[string]interface{}:
		pairs := [][2]interface{}{}
		for k, item := range x {
			pairs = append(pairs, [2]interface{}{k, annotate(item)})
		}
		return map[string]interface{}{"map": pairs}
	default:
		return map[string]string{"type": fmt.Sprintf("%T", x), "value": fmt.Sprint(x)}
	}
}

func read(unmarshal func([]byte, interface{}) error, text []byte) interface{} {
	var doc interface{}
	if err := unmarshal(text, &doc); err != nil {
		return map[string]string{"error": err.Error()}
	}
	return annotate(doc)
}

func main() {
	text, err := io.ReadAll(os.Stdin)
	if err != nil {
		panic(err)
	}
	out := map[string]interface{}{"v2": read(yaml2.Unmarshal, text), "v3": read(yaml3.Unmarshal, text)}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
