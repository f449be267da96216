package runner

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// CPUName is the processor's name as go test prints it on its "cpu:" line
// (the testing package's internal/sysinfo.CPUName): the brand string the
// CPUID instruction gives on x86, else /proc/cpuinfo's model name, with
// its clock where the name has none; GOARCH when neither says.
//
// perflab run and perflab bench record it alike, and results.txt is then
// compared with go test output in one benchstat table: benchstat splits
// tables by every file key that differs, and /proc/cpuinfo's "AMD EPYC"
// here against the brand "Oxide Virtual Turin-like Processor" kept a
// scenario run's results apart from a bench run's and from go test's.
func CPUName() string {
	if name := cpuidName(); name != "" {
		return name
	}
	if name := procCPUName(); name != "" {
		return name
	}
	return runtime.GOARCH
}

// cpuBrand is the brand string of the CPUID leaves 0x80000002-4 (48
// bytes), trimmed as the runtime's internal/cpu.Name trims it: leading
// spaces, and everything from the first NUL.
func cpuBrand(regs [12]uint32) string {
	b := make([]byte, 0, 48)
	for _, r := range regs {
		b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// procCPUName is the first processor's name in /proc/cpuinfo, as the
// testing package reads it where CPUID has none (arm64): "model name" (or
// "Model Name"), and " @ <cpu MHz>MHz" after it when it names no clock.
func procCPUName() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	model, mhz := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() && sc.Text() != "" { // the first processor's block
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Model Name", "model name":
			model = v
		case "CPU MHz", "cpu MHz":
			mhz = v
		}
	}
	return withClock(model, mhz)
}

// withClock is model with " @ <mhz>MHz" after it, unless model is empty,
// mhz unknown, or model names its clock already (GHz or MHz).
func withClock(model, mhz string) string {
	if model == "" || mhz == "" || strings.Contains(model, "GHz") || strings.Contains(model, "MHz") {
		return model
	}
	return model + " @ " + mhz + "MHz"
}
