import { describe, expect, it } from "vitest";
import { isGloballyReachable, parseIpAddress } from "../../src/platform/ip-addresses";

/** The address as its eight 16-bit groups in hex, so that two spellings compare equal. */
const groupsOf = (text: string) => parseIpAddress(text)?.bits.toString(16).padStart(32, "0").match(/.{4}/g)?.join(":");

describe("parsing IP addresses", () => {
  it("reads every spelling of one IPv6 address as the same bits", () => {
    const loopback = [
      "::1",
      "0:0:0:0:0:0:0:1",
      "0000:0000:0000:0000:0000:0000:0000:0001",
      "0::1",
      "::0:1",
      "::0.0.0.1",
      "::0:0.0.0.1",
    ];
    for (const text of loopback)
      expect({ text, groups: groupsOf(text) }).toEqual({ text, groups: "0000:0000:0000:0000:0000:0000:0000:0001" });
    for (const [text, groups] of [
      ["::", "0000:0000:0000:0000:0000:0000:0000:0000"],
      ["::127.0.0.1", "0000:0000:0000:0000:0000:0000:7f00:0001"],
      ["::7f00:1", "0000:0000:0000:0000:0000:0000:7f00:0001"],
      ["::ffff:127.0.0.1", "0000:0000:0000:0000:0000:ffff:7f00:0001"],
      ["::FFFF:7F00:1", "0000:0000:0000:0000:0000:ffff:7f00:0001"],
      ["64:ff9b::10.0.0.1", "0064:ff9b:0000:0000:0000:0000:0a00:0001"],
      ["2001:db8::", "2001:0db8:0000:0000:0000:0000:0000:0000"],
      ["1::", "0001:0000:0000:0000:0000:0000:0000:0000"],
      ["1:2:3:4:5:6:7::", "0001:0002:0003:0004:0005:0006:0007:0000"],
      ["::2:3:4:5:6:7:8", "0000:0002:0003:0004:0005:0006:0007:0008"],
      ["1:2:3:4:5:6:1.2.3.4", "0001:0002:0003:0004:0005:0006:0102:0304"],
      ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ]) {
      expect({ text, groups: groupsOf(text!) }).toEqual({ text, groups });
    }
  });

  it("reads dotted IPv4 as 32 bits", () => {
    expect(parseIpAddress("1.1.1.1")).toEqual({ version: 4, bits: 0x01010101n });
    expect(parseIpAddress("255.255.255.255")).toEqual({ version: 4, bits: 0xffffffffn });
    expect(parseIpAddress("0.0.0.0")).toEqual({ version: 4, bits: 0n });
  });

  it("refuses what is not an address: zone ids, misplaced or repeated ::, too many groups, bad IPv4", () => {
    for (const text of [
      "",
      "fe80::1%eth0",
      "fe80::1%25eth0",
      ":::",
      "1:::2",
      "1::2::3",
      ":1::",
      "::1:",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8::",
      "::1:2:3:4:5:6:7:8",
      "12345::",
      "g::1",
      "::1.2.3",
      "::1.2.3.4:5",
      "::256.0.0.1",
      "1.2.3.4::",
      "[::1]",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "010.0.0.1",
      "0x7f.0.0.1",
      "1.2.3.-4",
      " 1.2.3.4",
      "example.com",
    ]) {
      expect({ text, parsed: parseIpAddress(text) }).toEqual({ text, parsed: undefined });
    }
  });
});

describe("which addresses are globally reachable", () => {
  const reachable = (text: string) => {
    const address = parseIpAddress(text);
    if (!address) throw new Error(`unparsed: ${text}`);
    return isGloballyReachable(address);
  };

  it("accepts public addresses, and IPv6 forms that carry a public IPv4", () => {
    for (const text of [
      "1.1.1.1",
      "8.8.8.8",
      "93.184.215.14",
      "192.0.0.9", // PCP anycast: globally reachable inside 192.0.0.0/24
      "192.31.196.1",
      "198.17.255.255",
      "198.20.0.1",
      "223.255.255.255",
      "2606:4700:4700::1111",
      "2a00:1450:4001:81c::200e",
      "2001:4860:4860::8888",
      "2001:1::1",
      "2001:4:112::1",
      "2620:4f:8000::1",
      "::ffff:1.1.1.1",
      "64:ff9b::808:808",
      "2002:101:101::1",
      // Teredo: server 65.54.227.120, client 1.1.1.1 (inverted: fefe:fefe).
      "2001:0:4136:e378:8000:63bf:fefe:fefe",
    ]) {
      expect({ text, reachable: reachable(text) }).toEqual({ text, reachable: true });
    }
  });

  it("refuses every special-purpose block that is not globally reachable, in every embedding", () => {
    for (const text of [
      "0.0.0.0",
      "0.1.2.3",
      "10.0.0.1",
      "100.64.0.1",
      "100.127.255.255",
      "127.0.0.1",
      "127.255.255.254",
      "169.254.169.254",
      "172.16.0.1",
      "172.31.255.255",
      "192.0.0.1",
      "192.0.0.8",
      "192.0.0.170",
      "192.0.2.1",
      "192.88.99.1",
      "192.168.1.1",
      "198.18.0.1",
      "198.19.255.255",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.1",
      "239.255.255.250",
      "240.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "0:0:0:0:0:0:0:1",
      "::7f00:1",
      "::127.0.0.1",
      "::ffff:127.0.0.1",
      "::ffff:a9fe:a9fe",
      "::ffff:10.0.0.1",
      "64:ff9b::7f00:1",
      "64:ff9b::192.168.0.1",
      "64:ff9b:1::808:808",
      "100::1",
      "100:0:0:1::1",
      "2001:db8::1",
      "2001:2::1",
      "2001:10::1",
      "2001:100::1",
      "2002:7f00:1::",
      "2002:a00:1::1",
      "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo client 127.0.0.1
      "2001:0:c0a8:101:8000:63bf:fefe:fefe", // Teredo server 192.168.1.1
      "3fff::1",
      "5f00::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "febf::1",
      "fec0::1",
      "ff02::1",
      "ff05::1:3",
      "4000::1",
      "1000::1",
    ]) {
      expect({ text, reachable: reachable(text) }).toEqual({ text, reachable: false });
    }
  });
});
