import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cidrProblem } from '../../src/schema/network-policy';

test('cidrProblem: a CIDR NetworkPolicy takes passes; anything else says what to write instead', () => {
  for (const ok of ['10.90.0.1/32', '10.90.0.0/24', '0.0.0.0/0', '2001:db8::/32', '2001:db8::1/128', '::/0', '::ffff:10.0.0.0/120']) {
    assert.equal(cidrProblem(ok), undefined, ok);
  }
  assert.equal(cidrProblem('10.0.0.1'), "'10.0.0.1' is not a CIDR: write an address with its prefix length, e.g. 10.0.0.1/32");
  assert.equal(cidrProblem('2001:db8::1'), "'2001:db8::1' is not a CIDR: write an address with its prefix length, e.g. 2001:db8::1/128");
  assert.equal(cidrProblem('10.0.0.0/33'), "'10.0.0.0/33' is not a CIDR: the prefix length must be 0 to 32");
  assert.equal(cidrProblem('10.0.0.0/x'), "'10.0.0.0/x' is not a CIDR: the prefix length must be 0 to 32");
  assert.equal(cidrProblem('2001:db8::/129'), "'2001:db8::/129' is not a CIDR: the prefix length must be 0 to 128");
  assert.equal(cidrProblem('300.0.0.0/8'), "'300.0.0.0/8' is not a CIDR: '300.0.0.0' is not an IPv4 or IPv6 address");
  assert.equal(cidrProblem('10.90.0.1/24'), "'10.90.0.1/24' has bits set past its prefix /24: write 10.90.0.0/24 (or the address as /32)");
  assert.equal(cidrProblem('2001:db8::1/64'), "'2001:db8::1/64' has bits set past its prefix /64: write 2001:db8::/64 (or the address as /128)");
  assert.equal(cidrProblem('2001:db8:1:2::5/48'), "'2001:db8:1:2::5/48' has bits set past its prefix /48: write 2001:db8:1::/48 (or the address as /128)");
});
