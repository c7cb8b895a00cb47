import { Module } from '@nestjs/common';
import { AuthorizeModule } from './authorize/authorize.module';
import { ConnectionsModule } from './connections/connections.module';
import { ExportModule } from './export/export.module';
import { LoginModule } from './login/login.module';
import { ViewsModule } from './views/views.module';

/**
 * The pages of consent-ui. Their collaborators come from global modules: RpcClient (RpcModule)
 * and SessionsRepository (SessionStoreModule) in the app; fakes in the unit specs.
 */
@Module({ imports: [LoginModule, AuthorizeModule, ConnectionsModule, ViewsModule, ExportModule] })
export class ConsentUiFeaturesModule {}
