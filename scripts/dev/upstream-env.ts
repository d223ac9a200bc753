import { randomBytes } from 'node:crypto';
import { mnemonicToAccount } from 'viem/accounts';
import { DepositAddresses, GAS_STATION_INDEX, accountXpubsOf, addressOfPublicKey, mnemonicEnvValue, mnemonicWords, newMnemonic, rootOfMnemonic, seedOfMnemonic, slip10Derive, solanaAddressOf, solanaPublicKeyOf } from '@chainpipe/custody';
import { publicPort } from '@chainpipe/runtime';
import { bitcoinWallet, developmentSimulatorBase, platformKeyEnv, simulatorUpstreamEnv } from '@chainpipe/testing';

/**
 * Prints the upstream configuration of the development stack for `make up` (.run/dev.env), one
 * NAME=value a line: every upstream pointed at upstream-sim on its development port, and the
 * platform's development keys from DEV_SIGNER_MNEMONIC (the one kept in .run/dev.env), or from a
 * new mnemonic when there is none yet. The simulator's chains post their blocks to this stack's
 * chain-ingest, and the development payer (the mnemonic's EVM account 1, m/44'/60'/1'/0/0, its
 * Bitcoin account 1, m/84'/0'/1'/0/0, and its Tron account 1, m/44'/195'/1'/0/0, apart from the
 * deposit keys of account 0) starts funded on them, so a demo can pay deposits, and so does the
 * gas station (the reserved index 2^31 − 1 of the EVM and the Tron account 0), which pays the gas
 * of token deposit addresses. The Solana payer is the mnemonic's m/44'/501'/0'/1' (change 1': no deposit index
 * derives it, those are m/44'/501'/i'/0'), funded on the simulator's Solana mainnet. The
 * simulator's signing service holds the same mnemonic: the gateway asks it for Solana deposit
 * addresses (DEPOSIT_SIGNER_URL; Solana keys derive hardened only, the gateway holds no key), and
 * the order executor's development signer derives the same keys.
 */
const mnemonic = process.env.DEV_SIGNER_MNEMONIC || newMnemonic();
const payer = mnemonicToAccount(mnemonicWords(mnemonic), { accountIndex: 1 });
const tronPayer = addressOfPublicKey('tvm', rootOfMnemonic(mnemonic).derive("m/44'/195'/1'/0/0").publicKey!);
const deposits = new DepositAddresses(accountXpubsOf(mnemonic));
const station = deposits.addressAt('evm', GAS_STATION_INDEX);
const tronStation = deposits.addressAt('tvm', GAS_STATION_INDEX);
const solanaPayer = solanaAddressOf(solanaPublicKeyOf(slip10Derive(seedOfMnemonic(mnemonic), "m/44'/501'/0'/1'").key));
const signerToken = randomBytes(16).toString('hex');
const env = {
  ...simulatorUpstreamEnv(developmentSimulatorBase()),
  ...platformKeyEnv(mnemonic),
  SIM_STREAM_URL: `http://127.0.0.1:${publicPort('chain-ingest')}/stream`,
  SIM_FUNDED_ACCOUNTS: `${payer.address},${station},${solanaPayer}`,
  SIM_FUNDED_BITCOIN_ADDRESSES: bitcoinWallet(mnemonicWords(mnemonic), 1).address,
  SIM_SIGNER_MNEMONIC: mnemonicEnvValue(mnemonic),
  SIM_SIGNER_TOKEN: signerToken,
  DEPOSIT_SIGNER_URL: `${developmentSimulatorBase()}/signer`,
  DEPOSIT_SIGNER_TOKEN: signerToken,
  SIM_FUNDED_TRON_ADDRESSES: `${tronPayer},${tronStation}`,
  // THORChain as it runs: its gas (and so its outbound fees and minimums) moves every minute, its vaults churn every hour
  SIM_THORCHAIN_GAS_MS: '60000',
  SIM_THORCHAIN_CHURN_MS: '3600000',
};
for (const [name, value] of Object.entries(env)) console.log(`${name}=${value}`);
