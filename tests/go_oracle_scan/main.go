// Go oracle for pciname's host scan: what one release of NVIDIA's KubeVirt
// GPU device plugin discovers on a node, as docs/naming.md (section 1,
// "Discovery per release") states it, written with the Go calls the plugin
// makes (filepath.Walk, os.ReadFile, os.Readlink, filepath.Split,
// strings.Trim/Split, regexp \s+) on a real directory tree.
//
// The three steps read in the plugin's order, so a reviewer can hold them
// next to its createIommuDeviceMap, createVgpuIDMap and createDevicePlugins:
//
//   - discoverFunctions: every non-directory entry of ROOT/sys/bus/pci/devices;
//     vendor "10de", a VFIO driver of the release, an iommu_group link; then
//     per-group (the first such function of a group reads `device` and
//     registers the group number) or per-function (every such function reads
//     `device` and registers its PCI address);
//   - discoverVgpus: every non-directory entry of ROOT/sys/bus/mdev/devices;
//     mdev_type/name by the release's rule, then the parent from the link;
//   - startPlugins: one plugin per map key, named by the release's algorithm
//     (the key looked up like a device id; the key itself when that gives
//     nothing, or, v1.0.0 for PCI, no plugin); on a release with mdev_leak
//     the vGPU device list is never reset between types.
//
// A panic (a file shorter than two bytes, a vGPU type without a space in
// v1.0.x, a vGPU link target without '/') is recovered and reported.
//
// Input on stdin: a JSON list of queries {root, pciids, algorithm, discovery,
// mdev_name, mdev_leak, unnamed_device, vfio_drivers}. Output: a JSON list
// of answers {crash, plugins: [{kind, key, resource, devices}]}, one per query.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

type query struct {
	Root        string   `json:"root"`
	PciIds      string   `json:"pciids"`
	Algorithm   string   `json:"algorithm"`
	Discovery   string   `json:"discovery"`
	MdevName    string   `json:"mdev_name"`
	MdevLeak    bool     `json:"mdev_leak"`
	Unnamed     string   `json:"unnamed_device"`
	VfioDrivers []string `json:"vfio_drivers"`
}

type plugin struct {
	Kind     string   `json:"kind"`
	Key      string   `json:"key"`
	Resource string   `json:"resource"`
	Devices  []string `json:"devices"`
}

type answer struct {
	Crash   string   `json:"crash"`
	Plugins []plugin `json:"plugins"`
}

var (
	whiteRuns  = regexp.MustCompile(`\s+`)
	notUpper   = regexp.MustCompile(`[^a-zA-Z0-9_.]+`)
	not2019    = regexp.MustCompile(`[^a-zA-Z0-9_]+`)
	slashOrDot = strings.NewReplacer("/", "_", ".", "_")
)

// idFromFile: the file's bytes after the first two ("0x"), newlines trimmed
// from both ends. Fewer than two bytes: the slice expression panics.
func idFromFile(dir, entry, property string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, entry, property))
	if err != nil {
		return "", err
	}
	return strings.Trim(string(data[2:]), "\n"), nil
}

// linkBase: the last component of a link's target.
func linkBase(dir, entry, link string) (string, error) {
	target, err := os.Readlink(filepath.Join(dir, entry, link))
	if err != nil {
		return "", err
	}
	_, base := filepath.Split(target)
	return base, nil
}

// discoverFunctions: device id -> kubelet device IDs, in walk order.
func discoverFunctions(q query) map[string][]string {
	dir := filepath.Join(q.Root, "sys", "bus", "pci", "devices")
	accepted := map[string]bool{}
	for _, d := range q.VfioDrivers {
		accepted[d] = true
	}
	groupTaken := map[string]bool{}
	byDevice := map[string][]string{}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil // not a device
		}
		entry := info.Name()
		vendor, err := idFromFile(dir, entry, "vendor")
		if err != nil || vendor != "10de" {
			return nil
		}
		driver, err := linkBase(dir, entry, "driver")
		if err != nil || !accepted[driver] {
			return nil
		}
		group, err := linkBase(dir, entry, "iommu_group")
		if err != nil {
			return nil
		}
		if q.Discovery == "per-function" {
			device, err := idFromFile(dir, entry, "device")
			if err != nil {
				return nil
			}
			byDevice[device] = append(byDevice[device], entry)
			return nil
		}
		if !groupTaken[group] {
			device, err := idFromFile(dir, entry, "device")
			if err != nil {
				return nil // the group stays free for its next function
			}
			byDevice[device] = append(byDevice[device], group)
		}
		groupTaken[group] = true
		return nil
	})
	return byDevice
}

// discoverVgpus: type string -> mdev uuids, in walk order.
func discoverVgpus(q query) map[string][]string {
	dir := filepath.Join(q.Root, "sys", "bus", "mdev", "devices")
	byType := map[string][]string{}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		entry := info.Name()
		data, err := os.ReadFile(filepath.Join(dir, entry, "mdev_type/name"))
		if err != nil {
			return nil
		}
		text := strings.Trim(string(data), "\n")
		var typeString string
		if q.MdevName == "second-field" {
			typeString = strings.Split(text, " ")[1] // no space: index out of range
		} else {
			typeString = whiteRuns.ReplaceAllString(text, "_")
		}
		target, err := os.Readlink(filepath.Join(dir, entry))
		if err != nil {
			return nil
		}
		parts := strings.Split(target, "/")
		_ = strings.Trim(parts[len(parts)-2], "\n") // the parent; no '/': index out of range
		byType[typeString] = append(byType[typeString], entry)
		return nil
	})
	return byType
}

func tidy(algorithm, rest string) string {
	rest = strings.TrimSpace(rest)
	if algorithm == "whole-file-2019" {
		return not2019.ReplaceAllString(whiteRuns.ReplaceAllString(rest, "_"), "")
	}
	rest = slashOrDot.Replace(strings.ToUpper(rest))
	return notUpper.ReplaceAllString(whiteRuns.ReplaceAllString(rest, "_"), "")
}

// deviceName: the release's algorithm on one key, as on a device id.
func deviceName(algorithm, key, pciIds string) string {
	file, err := os.Open(pciIds)
	if err != nil {
		panic(err)
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	if algorithm == "vendor-section" {
		found := false
		for !found && lines.Scan() {
			found = strings.HasPrefix(lines.Text(), "10de")
		}
		for found && lines.Scan() {
			text := lines.Text()
			if strings.HasPrefix(text, "#") {
				continue
			}
			if !strings.HasPrefix(text, "\t") {
				return ""
			}
			if rest := strings.TrimPrefix(text, "\t"+key); rest != text {
				return tidy(algorithm, rest)
			}
		}
		return ""
	}
	for lines.Scan() {
		text := strings.TrimSpace(lines.Text())
		if text == "" || !strings.Contains(text, key) {
			continue
		}
		pieces := strings.Split(text, key)
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

func startPlugins(q query, byDevice, byType map[string][]string) []plugin {
	plugins := []plugin{}
	for key, ids := range byDevice {
		name := deviceName(q.Algorithm, key, q.PciIds)
		if name == "" {
			if q.Unnamed == "not-advertised" {
				continue
			}
			name = key
		}
		plugins = append(plugins, plugin{"pci", key, "nvidia.com/" + name, ids})
	}
	var devs []string
	for key, uuids := range byType {
		if !q.MdevLeak {
			devs = nil
		}
		devs = append(devs, uuids...)
		name := deviceName(q.Algorithm, key, q.PciIds)
		if name == "" {
			name = key
		}
		plugins = append(plugins, plugin{"mdev", key, "nvidia.com/" + name, append([]string{}, devs...)})
	}
	return plugins
}

func run(q query) (a answer) {
	defer func() {
		if r := recover(); r != nil {
			a = answer{Crash: fmt.Sprint(r), Plugins: []plugin{}}
		}
	}()
	byDevice := discoverFunctions(q)
	byType := discoverVgpus(q)
	return answer{Plugins: startPlugins(q, byDevice, byType)}
}

func main() {
	var queries []query
	if err := json.NewDecoder(os.Stdin).Decode(&queries); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	answers := make([]answer, 0, len(queries))
	for _, q := range queries {
		answers = append(answers, run(q))
	}
	if err := json.NewEncoder(os.Stdout).Encode(answers); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
