// Package all registers perflab's built-in scenarios. Import it for its side
// effects:
//
//	import _ "github.com/perflab/perflab/scenarios/all"
package all

import (
	_ "github.com/perflab/perflab/scenarios/ciphercache"
	_ "github.com/perflab/perflab/scenarios/cipherstream"
	_ "github.com/perflab/perflab/scenarios/suitelookup"
	_ "github.com/perflab/perflab/scenarios/uuidhash"
)
