package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Sealer encrypts small secrets at rest with AES-256-GCM (merchant API secrets, card
// numbers). Each sealed value is nonce ‖ ciphertext ‖ tag.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer makes a sealer from a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// LoadOrCreateKey reads a hex key file, creating it (0600) with a random key when absent.
func LoadOrCreateKey(path string) ([]byte, error) {
	raw, _, err := ReadKeyFile(path, MaxKeyFileSize)
	if errors.Is(err, os.ErrNotExist) {
		key := make([]byte, 32)
		rand.Read(key)
		err := WriteFileOnce(path, []byte(hex.EncodeToString(key)+"\n"), 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreateKey(path) // another first start wrote it: use that one
		}
		if err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseKey(string(raw))
}

// ParseKey reads a key written as 64 hex characters.
func ParseKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(key) != 32 {
		return nil, errors.New("a key is 64 hex characters (32 bytes)")
	}
	return key, nil
}

// Seal encrypts plain; additional binds the ciphertext to its owner (a merchant id, a token)
// so that a sealed value copied to another record does not open.
func (s *Sealer) Seal(plain, additional []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, additional)
}

// Open decrypts what Seal produced with the same additional data.
func (s *Sealer) Open(sealed, additional []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], additional)
}

// Fingerprint names a key without revealing it: the first 16 hex characters of a SHA-256 of
// the key under a label of its own. The store records it (rules.KeyFingerprints) to know
// the key that sealed its secrets; messages show it to tell two keys apart.
func Fingerprint(key []byte) string {
	sum := sha256.Sum256(append([]byte("payouts key fingerprint\x00"), key...))
	return hex.EncodeToString(sum[:8])
}
