// Whether this CPU seals AES-256-GCM in hardware: the test behind
// `cipher: auto` (aead_offer.h). Without AES instructions OpenSSL's AES is a
// constant-time software one several times slower than ChaCha20-Poly1305,
// so only a CPU with both halves of GCM in hardware prefers it:
//   x86-64   CPUID.1:ECX AES-NI (bit 25) and PCLMULQDQ (bit 1), minus what
//            OPENSSL_ia32cap masks (OpenSSL then does not use them either)
//   AArch64  HWCAP_AES and HWCAP_PMULL (ARMv8 Crypto Extensions)
//   others   no
// Cheap (one CPUID or getauxval); the answer is computed once and cached.
#pragma once

namespace egw::tunnel::crypto {

bool cpu_has_aes_gcm_instructions();

}  // namespace egw::tunnel::crypto
