// Package testmain has a TestMain, and external tests that declare the
// names the rate file's imports would take without their own names.
package testmain

import "crypto/sha256"

func Hash(buf []byte) [32]byte { return sha256.Sum256(buf) }
