// Go-semantics oracle for pciname's tests.
//
// The four name algorithms as docs/naming.md states them, written with Go's own
// bufio.Scanner, strings, unicode and regexp packages, so that the tests can
// compare pciname's Python emulation of Go's text semantics against Go
// itself on generated files.
//
// Input on stdin, one query per line: ALGORITHM <tab> DEVICE-ID <tab> FILE.
// Output: one name per query and line (empty line: no name).
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

var (
	whiteRuns  = regexp.MustCompile(`\s+`)
	notUpper   = regexp.MustCompile(`[^a-zA-Z0-9_.]+`)
	not2019    = regexp.MustCompile(`[^a-zA-Z0-9_]+`)
	slashOrDot = strings.NewReplacer("/", "_", ".", "_")
)

func tidy(algorithm, rest string) string {
	rest = strings.TrimSpace(rest)
	if algorithm == "whole-file-2019" {
		return not2019.ReplaceAllString(whiteRuns.ReplaceAllString(rest, "_"), "")
	}
	rest = slashOrDot.Replace(strings.ToUpper(rest))
	return notUpper.ReplaceAllString(whiteRuns.ReplaceAllString(rest, "_"), "")
}

func lookup(algorithm, id, path string) string {
	file, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer file.Close()
	lines := bufio.NewScanner(file)

	if algorithm == "vendor-section" {
		inNvidia := false
		for !inNvidia && lines.Scan() {
			inNvidia = strings.HasPrefix(lines.Text(), "10de")
		}
		for inNvidia && lines.Scan() {
			text := lines.Text()
			if strings.HasPrefix(text, "#") {
				continue
			}
			if !strings.HasPrefix(text, "\t") {
				return ""
			}
			if rest := strings.TrimPrefix(text, "\t"+id); rest != text {
				return tidy(algorithm, rest)
			}
		}
		return ""
	}

	for lines.Scan() {
		text := strings.TrimSpace(lines.Text())
		if text == "" || !strings.Contains(text, id) {
			continue
		}
		pieces := strings.Split(text, id)
		if len(pieces) != 2 {
			return ""
		}
		if algorithm == "whole-file-anchored" && pieces[0] != "" {
			continue
		}
		return tidy(algorithm, pieces[1])
	}
	return ""
}

func main() {
	queries := bufio.NewScanner(os.Stdin)
	queries.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for queries.Scan() {
		fields := strings.SplitN(queries.Text(), "\t", 3)
		if len(fields) != 3 {
			fmt.Fprintln(os.Stderr, "bad query:", queries.Text())
			os.Exit(2)
		}
		fmt.Fprintln(out, lookup(fields[0], fields[1], fields[2]))
	}
}
