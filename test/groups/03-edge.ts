import { runGroup } from '../helpers/groups.js'

await runGroup('edge')
