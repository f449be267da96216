package runner

// cpuid executes the CPUID instruction with EAX=eaxArg and ECX=ecxArg.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// cpuidName is the CPUID brand string, "" where the CPU has none.
//
// Read here, not with github.com/klauspost/cpuid/v2 (its BrandName): that
// trims spaces at both ends and says "unknown" where the CPU has no brand,
// and the name must be go test's, byte for byte, for benchstat to put a
// run's results.txt in one table with go test output (see CPUName).
func cpuidName() string {
	if top, _, _, _ := cpuid(0x80000000, 0); top < 0x80000004 {
		return ""
	}
	var regs [12]uint32
	for i := range uint32(3) {
		a, b, c, d := cpuid(0x80000002+i, 0)
		regs[4*i], regs[4*i+1], regs[4*i+2], regs[4*i+3] = a, b, c, d
	}
	return cpuBrand(regs)
}
