package runner

import (
	"encoding/binary"
	"testing"
)

// brandRegs lays s out as CPUID's leaves 0x80000002-4 return it: 48
// bytes, little-endian in EAX, EBX, ECX, EDX, NUL-padded.
func brandRegs(s string) [12]uint32 {
	var b [48]byte
	copy(b[:], s)
	var regs [12]uint32
	for i := range regs {
		regs[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return regs
}

// TestCPUName: the brand string and /proc/cpuinfo's name are trimmed and
// completed as the testing package's cpu: line has them, so that a
// scenario run's results.txt and go test's output share one benchstat
// table.
func TestCPUName(t *testing.T) {
	for _, tt := range []struct{ name, brand, want string }{
		{"as it is", "Oxide Virtual Turin-like Processor", "Oxide Virtual Turin-like Processor"},
		{"leading spaces", "      Intel(R) Xeon(R) CPU E5-2690 v4 @ 2.60GHz", "Intel(R) Xeon(R) CPU E5-2690 v4 @ 2.60GHz"},
		{"trailing spaces kept, as go test keeps them", "AMD EPYC 7B13 64-Core Processor  ", "AMD EPYC 7B13 64-Core Processor  "},
		{"none", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := cpuBrand(brandRegs(tt.brand)); got != tt.want {
				t.Errorf("cpuBrand(%q) = %q, want %q", tt.brand, got, tt.want)
			}
		})
	}
	for _, tt := range []struct{ model, mhz, want string }{
		{"Neoverse-N1", "3000.000", "Neoverse-N1 @ 3000.000MHz"},
		{"Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz", "2900.000", "Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz"},
		{"AMD EPYC", "", "AMD EPYC"},
		{"", "3000.000", ""},
	} {
		if got := withClock(tt.model, tt.mhz); got != tt.want {
			t.Errorf("withClock(%q, %q) = %q, want %q", tt.model, tt.mhz, got, tt.want)
		}
	}
	if CPUName() == "" {
		t.Error("CPUName() is empty")
	}
}
